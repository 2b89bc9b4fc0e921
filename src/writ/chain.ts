// Attenuation and chain verification, spec section 4 (and section 2.1).
import { Context, Effect, Either, Layer, Option, String as Str } from "effect"
import { hashTextB64 } from "../kernel/hash.js"
import { type JsonObject, type Reading, readJson, scanDepth } from "../kernel/json.js"
import type { Take, TakenValue } from "../kernel/json-take.js"
import { copyString, type VerificationCacheSync, verificationCacheSync } from "../kernel/verification-cache.js"
import { boundNarrows, has } from "./bound.js"
import { WritError, writError } from "./reason.js"
import { canonicalText } from "./sign.js"
import { byteLength, chainShape, failOr, type ObjectInput, Received, result, Within } from "./verify.js"
import { type CheckedWrit, verifyWritSync, writSpec } from "./writ.js"

const p = (i: number) => `chain[${i}]`

// The checks are plain functions returning the first failure (or undefined, or the value), wrapped
// once as Effects: they run on every call, and an Effect per check cost more than the checks
// themselves. The `...Sync` forms are what the entry points run.

/** Section 4 steps 1 to 5 on one pair, the first failure or undefined. */
export const childFailure = (child: CheckedWrit, parent: CheckedWrit, path?: string): WritError | undefined => {
  const C = child.value
  const P = parent.value
  const at = (m: string) => (path === undefined ? undefined : `${path}.${m}`)
  // 1. C.iss equals P.hld (`chain_broken`).
  if (C.iss !== P.hld) return writError("chain_broken", at("iss"), "issuer is not the parent's holder")
  // 2. C.prv equals the identity of P (`chain_broken`).
  if (C.prv !== parent.id) return writError("chain_broken", at("prv"), "prv is not the parent's identity")
  // 3. C.exp <= P.exp (`not_narrowed`).
  if (C.exp > P.exp) return writError("not_narrowed", at("exp"), "child outlives its parent")
  // 4. Every bound of P is in C, same type, narrowed (`not_narrowed`). Parent names in canonical
  //    order, so the first failure reported is stable.
  for (const n of Object.keys(P.bnd).sort(Str.Order)) {
    if (!has(C.bnd, n)) return writError("not_narrowed", at(`bnd.${n}`), `child drops bound ${n}`)
    if (C.bnd[n].t !== P.bnd[n].t) return writError("not_narrowed", at(`bnd.${n}`), `child retypes bound ${n}`)
    if (!boundNarrows(C.bnd[n], P.bnd[n])) return writError("not_narrowed", at(`bnd.${n}`), `child widens bound ${n}`)
  }
  // 5. If P.bnd has `hld`, C.hld is one of its elements (`not_narrowed`).
  if (P.bnd.hld !== undefined) {
    const allowed = P.bnd.hld.v
    if (!allowed.some((k) => k === C.hld)) return writError("not_narrowed", at("hld"), "holder not in the parent's hld set")
  }
  return undefined
}

/** Section 4 steps 1 to 5: is `child` a valid child of `parent`? First failure wins. */
export const checkChild = (child: CheckedWrit, parent: CheckedWrit, path?: string): Effect.Effect<void, WritError> =>
  Effect.suspend(() => failOr(childFailure(child, parent, path)))

export const depthFailure = (chain: ReadonlyArray<CheckedWrit>, path: string): WritError | undefined => {
  const n = chain.length
  for (let i = 0; i < n; i++) {
    const d = chain[i].value.bnd.depth
    if (d !== undefined && n - 1 - i > (d.v as number)) {
      return writError("not_narrowed", `${path}[${i}].bnd.depth`, `${n - 1 - i} writs below a depth of ${d.v}`)
    }
  }
  return undefined
}

/** Section 4, the `depth` rule over a whole chain: the writ at index i of n, if it carries `depth`,
 * has (n - 1 - i) <= depth.v (`not_narrowed`). */
export const checkDepth = (chain: ReadonlyArray<CheckedWrit>, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.suspend(() => failOr(depthFailure(chain, path)))

/** Section 7 step 2 (and section 9.1 step 2): every writ in the chain passes section 6.1, in array order. */
export const verifyChainWritsSync = (
  chain: ReadonlyArray<ObjectInput>,
  path: string,
  cache: VerificationCacheSync | undefined
): ReadonlyArray<CheckedWrit> | WritError => {
  const out: Array<CheckedWrit> = []
  for (let i = 0; i < chain.length; i++) {
    const w = verifyWritSync(chain[i], `${path}[${i}]`, cache)
    if (w instanceof WritError) return w
    out.push(w)
  }
  return out
}

export const verifyChainWrits = (chain: ReadonlyArray<ObjectInput>, path = "chain"): Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(verifyChainWritsSync(chain, path, cache)))

// ---------------------------------------------------------------------------------------------
// A chain as received, verified once (DESIGN.md, "Crypto hot path"). The same
// chain comes back with every call made under it, byte for byte. Section 6.1 on its writs depends
// on nothing but those bytes (keys are judged from the bytes too; time is section 7 step 4, not
// here), so what the writs verified to can be held under a hash of the exact bytes received and
// given back for the same bytes: one SHA-256 and one lookup instead of a signature per writ. Only
// a chain whose every writ verified is held, so a hit repeats an acceptance of those very bytes;
// any other bytes, a changed byte included, miss and are verified in full, with their reason.

/** What a held chain is accounted at, per UTF-16 unit of its text: the flat copy of the text (2
 * bytes a unit), the values read from it (objects, arrays, strings sliced from the copy) and the
 * checked writs, which test/writ/received-chain.test.ts measures at under 20 bytes a unit. */
export const HELD_CHAIN_BYTES_PER_UNIT = 24

const seenKey = (digest: string) => `chain-seen ${digest}`
const heldKey = (digest: string) => `chain ${digest}`

/** A held chain: its writs, and the array they were read from as the reader takes it again
 * (json-take.ts) when a call carries the same text, with that text's canonical flag and depth. */
interface HeldChain {
  readonly writs: ReadonlyArray<CheckedWrit>
  readonly taken: TakenValue
}

/** What the chain's owner attached to a call's chain while it was read: the digest of its text,
 * and the held chain when the text is one. */
interface ChainNote {
  readonly digest: string
  readonly held?: HeldChain
}

/**
 * The call's `chain` offered as text before it is read (json-take.ts): its digest is what the held
 * chains are keyed by, so a call under a held chain costs that one hash and one lookup, and none
 * of its writs is read again. A chain not held is read as before, its digest noted for step 2.
 */
export const heldChainTake = (cache: VerificationCacheSync): Take => ({
  member: "chain",
  level: 1,
  offer: (text) => {
    const digest = hashTextB64(text)
    const held = cache.verified(heldKey(digest))
    if (Option.isNone(held)) return { note: { digest } satisfies ChainNote }
    const chain = held.value as HeldChain
    return { taken: chain.taken, note: { digest, held: chain } satisfies ChainNote }
  }
})

/**
 * The writs of a held chain, sharing nothing with the request they came in: read again from a
 * flat copy of the chain's text (it reads, as it did the first time), each with the identity
 * already computed. The typed values are rebuilt by section 6.1 step 5, which passed on these
 * bytes already.
 */
const detached = (
  text: string,
  writs: ReadonlyArray<CheckedWrit>,
  path: string,
  cache: VerificationCacheSync
): HeldChain | undefined | WritError => {
  const copy = copyString(text)
  const again = readJson(copy, { maxDepth: 64, integersOnly: true, spanLevels: 2, cut: "sig" })
  if (Either.isLeft(again) || !Array.isArray(again.right.value) || again.right.value.length !== writs.length) return undefined
  const reading = again.right
  const array = reading.value as ReadonlyArray<JsonObject>
  const out: Array<CheckedWrit> = []
  for (let i = 0; i < writs.length; i++) {
    const json = array[i]
    const span = reading.spans.get(json)
    const canonical = span !== undefined && span.canonical ? copy.slice(span.start, span.end) : canonicalText(json)
    const cut = span?.cut
    const withoutSig = cut === undefined ? undefined : copy.slice(span!.start, cut[0]) + copy.slice(cut[1], span!.end)
    const value = writSpec.checkMembers(json, `${path}[${i}]`, cache)
    if (value instanceof WritError) return value
    out.push(withoutSig === undefined ? { json, value, canonical, id: writs[i].id } : { json, value, canonical, id: writs[i].id, withoutSig })
  }
  const canonical = reading.spans.get(array)?.canonical ?? false
  return { writs: out, taken: { value: array, canonical, depth: scanDepth(copy) } }
}

/**
 * Section 7 step 2 (and section 9.1 step 2) on the chain of an object read from received text:
 * every writ passes section 6.1, in array order, each read off that text (its canonical bytes and
 * signing input are slices of it, not serialized again). With a VerificationCache, a chain is held
 * once it has been seen twice (a chain seen once is most often never seen again, and is not worth
 * a copy), and a held chain costs one hash of its bytes: the reader already took it by that hash
 * when the object was read with `heldChainTake`, or it is looked up here.
 */
export const verifyReceivedChainWritsSync = (
  reading: Reading | undefined,
  chain: ReadonlyArray<JsonObject>,
  path: string,
  cache: VerificationCacheSync | undefined
): ReadonlyArray<CheckedWrit> | WritError => {
  const note = reading?.notes?.get(chain) as ChainNote | undefined
  // Taken by the reader: these are the held chain's own values (the bytes were exactly its text).
  if (note?.held !== undefined && note.held.taken.value === chain) return note.held.writs
  const span = reading?.spans.get(chain)
  if (reading === undefined || span === undefined) return verifyChainWritsSync(chain, path, cache)
  const inputs = chain.map((w) => new Within(reading, w))
  if (cache === undefined) return verifyChainWritsSync(inputs, path, cache)
  // The exact bytes received: the text was read from them strictly (valid UTF-8), so its UTF-8
  // encoding, which the hash takes, is those bytes.
  const text = reading.text.slice(span.start, span.end)
  const digest = note?.digest ?? hashTextB64(text)
  const held = cache.verified(heldKey(digest))
  if (Option.isSome(held)) return (held.value as HeldChain).writs
  const writs = verifyChainWritsSync(inputs, path, cache)
  if (writs instanceof WritError) return writs
  if (Option.isNone(cache.verified(seenKey(digest)))) {
    cache.hold(seenKey(digest), true, 0)
  } else {
    const copy = detached(text, writs, path, cache)
    if (copy instanceof WritError) return copy
    if (copy !== undefined) cache.hold(heldKey(digest), copy, HELD_CHAIN_BYTES_PER_UNIT * text.length)
  }
  return writs
}

export const verifyReceivedChainWrits = (
  reading: Reading | undefined,
  chain: ReadonlyArray<JsonObject>,
  path = "chain"
): Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> =>
  Effect.flatMap(verificationCacheSync, (cache) => result(verifyReceivedChainWritsSync(reading, chain, path, cache)))

/** Section 7 step 3: the rest of section 4's chain verification over writs that passed section 6.1:
 * the root's `prv` is null (`chain_broken`); every adjacent pair passes steps 1 to 5, root first;
 * `depth` holds over the chain. */
export const chainLinksFailure = (chain: ReadonlyArray<CheckedWrit>, path = "chain"): WritError | undefined => {
  if (chain.length === 0) return writError("malformed", path, "a chain is not empty")
  // The root's prv is null.
  if (chain[0].value.prv !== null) return writError("chain_broken", `${path}[0].prv`, "the root's prv is not null")
  // Every adjacent pair, root first.
  for (let i = 1; i < chain.length; i++) {
    const e = childFailure(chain[i], chain[i - 1], `${path}[${i}]`)
    if (e !== undefined) return e
  }
  // depth over the whole chain.
  return depthFailure(chain, path)
}

export const checkChainLinks = (chain: ReadonlyArray<CheckedWrit>, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.suspend(() => failOr(chainLinksFailure(chain, path)))

/** A chain received whole (the bytes of its JSON array, as a chain file or a token carries it) is
 * bounded before it is read like the call that would carry it (section 1.6: 65536 bytes). */
export const RECEIVED_CHAIN_MAX_BYTES = 65536

/** Section 4's chain verification up to the links: shape, emptiness, section 6.1 on every writ.
 * A chain received whole is first read strictly once (section 1.1; a reading error is its reason
 * at the chain), and its writs are checked off that text as the executor checks a call's chain
 * (`verifyReceivedChainWritsSync`: canonical bytes and signing inputs are slices of it). */
const chainWritsSync = (chain: unknown, path: string, cache: VerificationCacheSync | undefined): ReadonlyArray<CheckedWrit> | WritError => {
  let reading: Reading | undefined
  if (chain instanceof Received) {
    if (byteLength(chain.bytes) > RECEIVED_CHAIN_MAX_BYTES) return writError("too_large", path, `a chain over ${RECEIVED_CHAIN_MAX_BYTES} bytes`)
    const read = chain.reading
    if (Either.isLeft(read)) return writError(read.left.reason, path, read.left.message)
    reading = read.right
  }
  const elements = chainShape<ObjectInput>(reading === undefined ? chain : reading.value, path)
  if (elements instanceof WritError) return elements
  if (elements.length === 0) return writError("malformed", path, "a chain is not empty")
  // Elements read from the received text are plain objects, as a call's chain is.
  return reading === undefined ? verifyChainWritsSync(elements, path, cache) : verifyReceivedChainWritsSync(reading, elements as ReadonlyArray<JsonObject>, path, cache)
}

/** Section 4's chain verification (see `verifyChain`) as a plain function. */
export const verifyChainSync = (chain: unknown, path: string, cache: VerificationCacheSync | undefined): ReadonlyArray<CheckedWrit> | WritError => {
  const writs = chainWritsSync(chain, path, cache)
  return writs instanceof WritError ? writs : chainLinksFailure(writs, path) ?? writs
}

/** Section 4's chain verification as an operation: the chain is an array (`malformed`) of at most 8
 * elements (`too_large`), each an object (`malformed`), not empty (`malformed`); every writ passes
 * section 6.1 in array order; then the links and `depth` (`checkChainLinks`). Expiry is separate.
 * The chain is a value already read, or `Received` bytes of the whole array, read here. */
export const verifyChain: (chain: unknown, path?: string) => Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> = Effect.fn(
  "writ.verifyChain"
)(function* (chain: unknown, path = "chain") {
  const writs = chainWritsSync(chain, path, yield* verificationCacheSync)
  if (writs instanceof WritError) return yield* Effect.fail(writs)
  yield* Effect.annotateCurrentSpan({ "writ.leaf": writs[writs.length - 1].id, "writ.chain_length": writs.length })
  const links = chainLinksFailure(writs, path)
  if (links !== undefined) return yield* Effect.fail(links)
  return writs
})

/** Section 12 ("Time"): a root whose `exp` is more than 24 hours ahead is refused by default. */
export const DEFAULT_ROOT_LIFETIME_SECONDS = 86_400

/**
 * How far ahead of `now` a root's `exp` may be (section 12, "Time": verifiers SHOULD reject a root
 * whose `exp` is more than 24 hours ahead unless configured otherwise, reason `expired`). `null`
 * lifts the limit. A reference with a default, so every verifier applies the rule unless its
 * composition says otherwise; an executor reads it once, when it is built.
 */
export class RootLifetime extends Context.Reference<RootLifetime>()("mandate/writ/RootLifetime", {
  defaultValue: (): { readonly maxSeconds: number | null } => ({ maxSeconds: DEFAULT_ROOT_LIFETIME_SECONDS })
}) {
  static layer(maxSeconds: number | null): Layer.Layer<never> {
    return Layer.succeedContext(Context.make(RootLifetime, { maxSeconds }))
  }
}

/** Section 7 step 4: for every writ in the chain, `now` < `exp` (`expired`); then section 12's
 * limit on how far ahead the root's `exp` may be (`expired`). */
export const expiryFailure = (
  chain: ReadonlyArray<CheckedWrit>,
  now: number,
  maxSeconds: number | null,
  path = "chain"
): WritError | undefined => {
  for (let i = 0; i < chain.length; i++) {
    if (!(now < chain[i].value.exp)) return writError("expired", `${path}[${i}].exp`, `expired at ${chain[i].value.exp}, now ${now}`)
  }
  if (chain.length > 0 && maxSeconds !== null && chain[0].value.exp - now > maxSeconds) {
    return writError("expired", `${path}[0].exp`, `the root runs ${chain[0].value.exp - now} s past now, over the ${maxSeconds} s allowed (section 12)`)
  }
  return undefined
}

export const checkExpiry = (chain: ReadonlyArray<CheckedWrit>, now: number, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.flatMap(RootLifetime, ({ maxSeconds }) => failOr(expiryFailure(chain, now, maxSeconds, path)))
