// Grants (SPEC §6.2–§6.4): `pg1.` tokens holding a chain of signed blocks.
//
//   token      = "pg1." + b64url(utf8(canonical(blocks)))
//   block      = {"p": payload, "s": b64url(Ed25519 signature over utf8(canonical(p)))}
//   root       p = {iss, sub, caveats, iat, nonce}, signed by iss
//   delegation p = {prev, sub, caveats, iat}, signed by the previous block's sub,
//                  prev = b64url(sha256(utf8(previous block's s)))
//   block id   = b64url(sha256(utf8(block.s))); grant id = root block id; holder = last sub.
//
// Grant signatures cover canonical(p) with no type prefix (unlike Writ). Decoding is strict: the
// token must be canonical base64url of the canonical JSON of its blocks, byte for byte, and every
// key and signature must be canonical base64url (GHSA-8mvj-4xpr-rmqw), so a block has exactly one
// spelling and one id, and a `total` can't be restarted by re-encoding a signature.
import { Effect, Either, Option, Schema } from "effect"
import { decodeBase64url, encodeBase64url } from "../kernel/base64url.js"
import { utf8 } from "../kernel/canonical.js"
import { verifyWithKeyObject } from "../kernel/ed25519.js"
import { hashB64, hashTextB64 } from "../kernel/hash.js"
import { parseJson } from "../kernel/json.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { copyString, type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { canonical, canonicalBytes } from "./canonical.js"
import { caveatProblem, type CaveatContext, type Evaluation, type TotalsLookup } from "./caveat.js"
import { evaluateCaveats } from "./caveat-evaluation.js"
import { decodeKeyText, decodeSignature, encodeKey, encodeSignature, isKey, verifyingKeyOf } from "./keys.js"
import { grantReason } from "./grant-reason.js"
import { yeaError, type YeaError } from "./reason.js"
import { unixSeconds } from "../kernel/clock.js"

export const TOKEN_PREFIX = "pg1."

// ---------------------------------------------------------------------------------------------
// Wire shapes

/** An `ed25519:` key in canonical form (§6.1). */
export const Key = Schema.String.pipe(Schema.filter((s) => isKey(s) || "a canonical ed25519: key"), Schema.annotations({ identifier: "Key" }))
/** The form of a `Key` only: `decodeGrant` reads payloads with it and then judges every key once,
 * through the VerificationCache when there is one (point decoding costs more than a signature). */
const KeyText = Schema.String.pipe(Schema.filter((s) => Option.isSome(decodeKeyText(s)) || "a canonical ed25519: key"), Schema.annotations({ identifier: "Key" }))
/** A canonical base64url 64-byte signature (§6.1). */
export const Signature = Schema.String.pipe(
  Schema.filter((s) => Option.isSome(decodeSignature(s)) || "a canonical base64url 64-byte signature"),
  Schema.annotations({ identifier: "Signature" })
)

/** Caveats stay raw JSON in the payload: a malformed caveat is `forbidden` at evaluation, not here. */
const Caveats = Schema.Array(Schema.Unknown)

const rootPayload = (key: typeof Key) =>
  Schema.Struct({
    iss: key,
    sub: key,
    caveats: Caveats,
    iat: Schema.Int,
    nonce: Schema.String
  }).annotations({ identifier: "RootPayload" })

const delegationPayload = (key: typeof Key) =>
  Schema.Struct({
    prev: Schema.String,
    sub: key,
    caveats: Caveats,
    iat: Schema.Int
  }).annotations({ identifier: "DelegationPayload" })

/** Root block payload (§6.2). */
export const RootPayload = rootPayload(Key)
export type RootPayload = typeof RootPayload.Type

/** Delegation block payload (§6.2). */
export const DelegationPayload = delegationPayload(Key)
export type DelegationPayload = typeof DelegationPayload.Type

/** `{"p": payload, "s": signature}` and nothing else: an unsigned extra member is refused. */
export const RawBlock = Schema.Struct({ p: Schema.Unknown, s: Signature }).annotations({
  identifier: "Block",
  parseOptions: { onExcessProperty: "error" }
})

/** A decoded block: its payload as written (what was signed), the typed view, and its id. */
export interface Block {
  /** The payload exactly as decoded: `canonical(raw)` is the signed message. */
  readonly raw: unknown
  readonly sub: string
  readonly caveats: ReadonlyArray<unknown>
  readonly iat: number
  readonly s: string
  readonly id: string
  /** utf8(canonical(p)): the message `s` signs. */
  readonly msg: Uint8Array
}

export interface RootBlock extends Block {
  readonly iss: string
  readonly nonce: string
}

export interface DelegationBlock extends Block {
  readonly prev: string
}

/** A decoded (not yet verified) grant. */
export interface Grant {
  readonly token: string
  readonly root: RootBlock
  readonly delegations: ReadonlyArray<DelegationBlock>
  /** root then delegations, in chain order. */
  readonly blocks: ReadonlyArray<Block>
  /** The grant id: the root block id (§6.2). */
  readonly id: string
  /** The principal: the root `iss`. */
  readonly principal: string
  /** The holder: the last block's `sub`. */
  readonly holder: string
}

/** `b64url(sha256(utf8(block.s)))` (§6.2). */
export const blockId = (s: string): string => hashB64(utf8(s))

// ---------------------------------------------------------------------------------------------
// Decoding (§6.4 step 1)

const unauthorized = (message: string, path?: string) => yeaError("unauthorized", message, path === undefined ? {} : { path })
/** §6.4 step 1: every decoding failure says "malformed grant", and how (grant-reason.ts). */
const malformed = (detail: string, path?: string) => unauthorized(grantReason.malformedGrant(detail), path)
/** The token's bytes are not b64url of UTF-8 strict JSON: one text, whichever layer failed. */
const NOT_B64URL_JSON = "not valid b64url JSON"

const decoders = {
  block: Schema.decodeUnknownEither(RawBlock),
  // The payloads with their keys' form checked; decodeGrant judges the keys themselves after.
  root: Schema.decodeUnknownEither(rootPayload(KeyText)),
  delegation: Schema.decodeUnknownEither(delegationPayload(KeyText))
}

/** §6.1: a key in a block is a usable key (a canonical point not of small order). */
const judgeKeys = (keys: ReadonlyArray<readonly [string, string]>, cache: VerificationCacheSync | undefined): Either.Either<void, YeaError> => {
  for (const [key, path] of keys) {
    if (Option.isNone(verifyingKeyOf(key, cache))) return Either.left(malformed(`${path}: a canonical ed25519: key`, path))
  }
  return Either.void
}

const decodeWith = <A>(
  decode: (u: unknown, o?: { errors: "first" }) => Either.Either<A, { readonly message: string }>,
  v: unknown,
  path: string
): Either.Either<A, YeaError> =>
  Either.mapLeft(decode(v, { errors: "first" }), (e) => malformed(`${path}: ${e.message.split("\n")[0]}`, path))

const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * §6.4 step 1: decode the token and check its prefix. Every failure is `unauthorized`.
 * The token must be exactly `pg1.` + canonical base64url of utf8(canonical(blocks)): the canonical
 * text is rebuilt from each block's canonical payload (which is also the signed message, so it is
 * computed once) and compared with what was sent. Keys are judged through `cache` when given.
 */
export const decodeGrant = (token: unknown, cache?: VerificationCacheSync): Either.Either<Grant, YeaError> =>
  Either.gen(function* () {
    if (typeof token !== "string" || !token.startsWith(TOKEN_PREFIX)) return yield* Either.left(malformed("a grant token starts with pg1."))
    const bytes = decodeBase64url(token.slice(TOKEN_PREFIX.length))
    if (Option.isNone(bytes)) return yield* Either.left(malformed(NOT_B64URL_JSON))
    let text: string
    try {
      text = utf8Fatal.decode(bytes.value)
    } catch {
      return yield* Either.left(malformed(NOT_B64URL_JSON))
    }
    // Strict reading: duplicate members, lone surrogates, non-integers refused.
    const parsed = parseJson(text, { integersOnly: true })
    if (Either.isLeft(parsed)) return yield* Either.left(malformed(NOT_B64URL_JSON))
    const list = parsed.right
    if (!Array.isArray(list) || list.length === 0) return yield* Either.left(malformed("a grant is a non-empty list of blocks"))
    const blocks: Array<Block> = []
    let root: RootBlock | undefined
    const delegations: Array<DelegationBlock> = []
    const canonicalParts: Array<string> = []
    for (let i = 0; i < list.length; i++) {
      const path = `blocks[${i}]`
      const rb = yield* decodeWith(decoders.block, list[i], path)
      const pc = canonical(rb.p)
      if (Either.isLeft(pc)) return yield* Either.left(malformed(`${path}.p has no canonical form: ${pc.left.message}`, `${path}.p`))
      canonicalParts.push(`{"p":${pc.right},"s":${JSON.stringify(rb.s)}}`)
      const id = blockId(rb.s)
      const msg = utf8(pc.right)
      if (i === 0) {
        const p = yield* decodeWith(decoders.root, rb.p, `${path}.p`)
        yield* judgeKeys([[p.iss, `${path}.p.iss`], [p.sub, `${path}.p.sub`]], cache)
        root = { raw: rb.p, sub: p.sub, caveats: p.caveats, iat: p.iat, s: rb.s, id, msg, iss: p.iss, nonce: p.nonce }
        blocks.push(root)
      } else {
        const p = yield* decodeWith(decoders.delegation, rb.p, `${path}.p`)
        yield* judgeKeys([[p.sub, `${path}.p.sub`]], cache)
        const d: DelegationBlock = { raw: rb.p, sub: p.sub, caveats: p.caveats, iat: p.iat, s: rb.s, id, msg, prev: p.prev }
        delegations.push(d)
        blocks.push(d)
      }
    }
    // One spelling only: any other spelling of the same blocks (spaces, member order, 1.0, -0)
    // is refused rather than normalized.
    if (`[${canonicalParts.join(",")}]` !== text) return yield* Either.left(malformed("not in canonical form"))
    return { token, root: root!, delegations, blocks, id: root!.id, principal: root!.iss, holder: blocks[blocks.length - 1].sub }
  })

// ---------------------------------------------------------------------------------------------
// Decoded grants held (§6.4 step 1 once per token)

/** What a held grant is accounted at per character of its token, as Writ accounts a held chain
 * (writ/chain.ts): the token's copy, the decoded
 * text its payloads are read from, the parsed payloads and each block's message. */
const HELD_GRANT_BYTES_PER_CHAR = 24

/** A token as received, named by the SHA-256 of its text, and the decoded grant held for it. */
export interface GrantReading {
  readonly grant: Grant
  /** The token's digest when a cache is in use and the grant is not held yet. */
  readonly digest?: string
}

/**
 * §6.4 step 1 through the VerificationCache: an agent sends the same grant with every request, and
 * decoding it (base64url, strict JSON, the payload shapes, the canonical form, the keys) costs
 * more than a signature check. A grant is held decoded once its chain has verified on two
 * requests ({@link holdVerifiedGrant}); a held grant costs one hash of the token and one lookup.
 * Only step 1 is skipped: the signatures (step 2) and the rest of §6.4 run on every request.
 */
export const readGrant = (token: unknown, cache: VerificationCacheSync | undefined): Either.Either<GrantReading, YeaError> => {
  if (cache === undefined || typeof token !== "string") return Either.map(decodeGrant(token, cache), (grant) => ({ grant }))
  const digest = hashTextB64(token)
  const held = cache.verified(`yea-grant ${digest}`)
  if (Option.isSome(held)) return Either.right({ grant: held.value as Grant })
  return Either.map(decodeGrant(token, cache), (grant) => ({ grant, digest }))
}

/**
 * After `reading`'s chain verified (steps 2–5): the first time, its digest is noted; the second
 * time, the decoded grant is held, detached from the request (its token copied; the rest was read
 * from the token's decoded bytes, not from the request's text). Only a verified grant is held.
 */
export const holdVerifiedGrant = (reading: GrantReading, cache: VerificationCacheSync | undefined): void => {
  if (cache === undefined || reading.digest === undefined) return
  const seen = `yea-grant-seen ${reading.digest}`
  if (Option.isNone(cache.verified(seen))) return cache.hold(seen, true, 0)
  const g = reading.grant
  cache.hold(`yea-grant ${reading.digest}`, { ...g, token: copyString(g.token) }, HELD_GRANT_BYTES_PER_CHAR * g.token.length)
}

// ---------------------------------------------------------------------------------------------
// Verification (§6.4)

export interface ChainOptions {
  /** Root issuers (principals) this service trusts, as `ed25519:` keys (§6.4 step 4). */
  readonly trusted: ReadonlyArray<string>
  /** The verified proof's key (§6.4 step 5). */
  readonly proofKey: string
  /** Where signing keys are judged once (the VerificationCache's plain form); none: afresh. */
  readonly cache?: VerificationCacheSync | undefined
}

/** §6.4 steps 2–5 on a decoded grant: signatures, `prev` links, trusted root, holder = proof key. */
export const verifyChain = (grant: Grant, opts: ChainOptions): Either.Either<Grant, YeaError> =>
  Either.gen(function* () {
    const { blocks } = grant
    // Step 2: each block's signature, by `iss` for the root and by the previous `sub` after it.
    for (let i = 0; i < blocks.length; i++) {
      const signerKey = i === 0 ? grant.root.iss : blocks[i - 1].sub
      const pub = verifyingKeyOf(signerKey, opts.cache)
      const sig = decodeSignature(blocks[i].s)
      if (Option.isNone(pub) || Option.isNone(sig) || !verifyWithKeyObject(pub.value.object, blocks[i].msg, sig.value)) {
        return yield* Either.left(unauthorized(grantReason.badSignature, `blocks[${i}].s`))
      }
    }
    // Step 3: each `prev` names the previous block.
    for (let i = 1; i < blocks.length; i++) {
      if ((blocks[i] as DelegationBlock).prev !== blocks[i - 1].id) {
        return yield* Either.left(unauthorized(`block ${i} prev does not name block ${i - 1}`, `blocks[${i}].p.prev`))
      }
    }
    // Step 4: the root issuer is a principal this service trusts. Keys are canonical, so string
    // equality is key equality.
    if (!opts.trusted.includes(grant.root.iss)) return yield* Either.left(unauthorized(grantReason.untrusted, "blocks[0].p.iss"))
    // Step 5: the holder (last `sub`) is the key that signed the proof.
    if (grant.holder !== opts.proofKey) return yield* Either.left(unauthorized(grantReason.notHolder))
    return grant
  })

/** The caveat view of a grant: each block's id and caveats, in chain order. */
export const caveatBlocks = (grant: Grant) => grant.blocks.map((b) => ({ id: b.id, caveats: b.caveats }))

/**
 * §6.4 in full for one grant: decode (1), chain (2–5), caveats (6). Succeeds with the grant and the
 * caveat evaluation; the caller decides between `forbidden` and `consent_required` (see
 * authorize.ts), because a request may carry several grants (§6.6).
 */
export const checkGrant = <E, R>(
  token: unknown,
  opts: ChainOptions,
  ctx: CaveatContext,
  usedOf: TotalsLookup<E, R>
): Effect.Effect<{ readonly grant: Grant; readonly evaluation: Evaluation }, YeaError | E, R> =>
  Effect.gen(function* () {
    const cache = opts.cache ?? (yield* verificationCacheSync)
    const grant = yield* decodeGrant(token, cache) // step 1
    yield* verifyChain(grant, { ...opts, cache }) // steps 2–5
    const evaluation = yield* evaluateCaveats(caveatBlocks(grant), ctx, usedOf) // step 6
    return { grant, evaluation }
  })

// ---------------------------------------------------------------------------------------------
// Issuing

const encodeToken = (blocks: ReadonlyArray<unknown>): Either.Either<string, YeaError> =>
  Either.map(
    Either.mapLeft(canonicalBytes(blocks), (e) => yeaError("invalid_params", `grant has no canonical form: ${e.message}`)),
    (bytes) => TOKEN_PREFIX + encodeBase64url(bytes)
  )

const checkCaveats = (caveats: ReadonlyArray<unknown>): Either.Either<void, YeaError> => {
  for (let i = 0; i < caveats.length; i++) {
    const p = caveatProblem(caveats[i])
    if (p !== undefined) return Either.left(yeaError("invalid_params", `caveat ${i}: ${p}`, { path: `caveats[${i}]` }))
  }
  return Either.void
}

const signPayload = (p: unknown) =>
  Effect.gen(function* () {
    const signer = yield* Signer
    const msg = yield* Either.mapLeft(canonicalBytes(p), (e) => yeaError("invalid_params", `payload has no canonical form: ${e.message}`))
    return { p, s: encodeSignature(yield* signer.sign(msg)) }
  })


export interface RootGrantInput {
  /** The holder (agent) key. */
  readonly sub: string
  readonly caveats: ReadonlyArray<unknown>
  /** Defaults to 16 random bytes from `RandomBytes`, base64url. */
  readonly nonce?: string
  /** Defaults to the Clock; a caller that also derives an `exp` caveat from "now" passes the one
   * time it read, so `exp - iat` is exactly the lifetime asked for. */
  readonly iat?: number
}

/**
 * Issues a root grant signed by the principal (the `Signer`), `iat` from the Clock. Refuses
 * caveats that would fail closed anyway, so no one hands out a grant that can never work.
 */
export const issueRootGrant = (input: RootGrantInput): Effect.Effect<string, YeaError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    if (!isKey(input.sub)) return yield* Effect.fail(yeaError("invalid_params", "sub is not a canonical ed25519: key"))
    yield* checkCaveats(input.caveats)
    const signer = yield* Signer
    const nonce = input.nonce ?? encodeBase64url(yield* (yield* RandomBytes).bytes(16))
    const iat = input.iat ?? (yield* unixSeconds)
    const p = { caveats: input.caveats, iat, iss: encodeKey(signer.publicKey), nonce, sub: input.sub }
    return yield* encodeToken([yield* signPayload(p)])
  })

export interface DelegationInput {
  /** The new holder (sub-agent) key. */
  readonly sub: string
  /** Added caveats: a delegation can only narrow, because every block's caveats must hold. */
  readonly caveats: ReadonlyArray<unknown>
  /** Defaults to the Clock (see `RootGrantInput.iat`). */
  readonly iat?: number
}

/** Delegates `token` by appending a block signed by its current holder (the `Signer`). */
export const delegateGrant = (token: string, input: DelegationInput): Effect.Effect<string, YeaError, Signer> =>
  Effect.gen(function* () {
    const grant = yield* decodeGrant(token)
    if (!isKey(input.sub)) return yield* Effect.fail(yeaError("invalid_params", "sub is not a canonical ed25519: key"))
    yield* checkCaveats(input.caveats)
    const signer = yield* Signer
    if (encodeKey(signer.publicKey) !== grant.holder) {
      return yield* Effect.fail(yeaError("unauthorized", "only the grant's holder can delegate it"))
    }
    const last = grant.blocks[grant.blocks.length - 1]
    const iat = input.iat ?? (yield* unixSeconds)
    const p = { caveats: input.caveats, iat, prev: last.id, sub: input.sub }
    const block = yield* signPayload(p)
    return yield* encodeToken([...grant.blocks.map((b) => ({ p: b.raw, s: b.s })), block])
  })
