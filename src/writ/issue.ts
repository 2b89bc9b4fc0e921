// Issuing, spec sections 2, 4, 5, 6, 9.1, 9.4 and 7.5: make and sign each object type with the
// `Signer` service, drawing `nnc` and `id` from the `RandomBytes` service.
//
// Section 7.5: an implementation MUST NOT sign a writ object received as data. Here no function
// takes a writ to sign. A root is built from parameters; a child is built by `delegate` from a
// `HeldWrit`, an opaque value that only this module can construct, and only from a chain whose
// leaf it issued to the Signer's own key or from a chain that verifies and whose leaf `hld` is the
// Signer's key; the child's bounds are the parent's with narrowing overrides, refused (before
// anything is signed) unless section 4 accepts the result as a child.
//
// Every function checks what it produced with the same verifier a receiver runs, so the module
// never emits an object that a conforming verifier would reject.
import { Effect, Option } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { encodeBase64url } from "../kernel/base64url.js"
import { didKeyFromPublicKey, publicKeyFromDidKey } from "../kernel/didkey.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import type { Bound, Bounds } from "./bound.js"
import { checkBounds } from "./bound.js"
import { type VerifiedCall, verifyCall } from "./call.js"
import { checkChild, checkDepth, verifyChain } from "./chain.js"
import { type WritError, writError } from "./reason.js"
import { type VerifiedRevoke, verifyRevoke } from "./revoke.js"
import { hashOf, type ObjectType, signingInput } from "./sign.js"
import { type CheckedTally, checkTally, type TallyErr, type TallyStatus } from "./tally.js"
import { type CheckedAck, verifyAck } from "./ack.js"
import { type CheckedWrit, verifyWrit, type Writ } from "./writ.js"

/** Section 1.6: `id` and `nnc` carry 16 random bytes. */
const RANDOM_BYTES = 16

const signed = (typ: ObjectType, unsigned: JsonObject): Effect.Effect<JsonObject, never, Signer> =>
  Effect.gen(function* () {
    const signer = yield* Signer
    const sig = yield* signer.sign(signingInput(typ, 1, unsigned))
    return { ...unsigned, sig: encodeBase64url(sig) }
  })

const randomB64 = Effect.flatMap(RandomBytes, (r) => Effect.map(r.bytes(RANDOM_BYTES), encodeBase64url))

/** The Signer's own key as a did:key (section 1.3). */
export const ownKey: Effect.Effect<string, never, Signer> = Effect.map(Signer, (s) => didKeyFromPublicKey(s.publicKey))

const checkKey = (k: string, path: string): Effect.Effect<void, WritError> =>
  Option.isSome(publicKeyFromDidKey(k)) ? Effect.void : Effect.fail(writError("bad_key", path, "not an Ed25519 did:key"))

// ---------------------------------------------------------------------------------------------
// Held writs.

const heldToken: unique symbol = Symbol("HeldWrit")
let makeHeld: (chain: ReadonlyArray<CheckedWrit>) => HeldWrit

/** A chain whose leaf is held by the Signer's key: the only thing a child can be delegated from.
 * Constructed only inside this module (section 7.5). */
export class HeldWrit {
  /** The verified chain, root first; its last writ is the held one. */
  readonly chain: ReadonlyArray<CheckedWrit>
  private constructor(token: typeof heldToken, chain: ReadonlyArray<CheckedWrit>) {
    if (token !== heldToken) throw new TypeError("HeldWrit is produced by issuing or by holdChain")
    this.chain = chain
  }
  static {
    // The one way to construct a HeldWrit, visible only inside this module.
    makeHeld = (chain) => new HeldWrit(heldToken, Object.freeze([...chain]))
  }
  get leaf(): CheckedWrit {
    return this.chain[this.chain.length - 1]
  }
  /** The chain as wire objects, root first (what a call under it carries). */
  get writs(): ReadonlyArray<Writ> {
    return this.chain.map((w) => w.json as unknown as Writ)
  }
}

/** A writ this Signer issued: the signed writ, its identity, and the chain it ends (root first).
 * `held` is present when the writ was issued to the Signer's own key. */
export interface Issued {
  readonly writ: Writ
  readonly id: string
  readonly chain: ReadonlyArray<Writ>
  readonly held?: HeldWrit
}

/** Take up a chain received from a delegator: section 4's chain verification, then its leaf `hld`
 * must be the Signer's key (`wrong_executor`: this party is not the leaf holder). */
export const holdChain = (chain: unknown): Effect.Effect<HeldWrit, WritError, Signer> =>
  Effect.gen(function* () {
    const writs = yield* verifyChain(chain)
    const me = yield* ownKey
    if (writs[writs.length - 1].value.hld !== me) {
      return yield* Effect.fail(writError("wrong_executor", "chain", "the leaf writ is not held by this key"))
    }
    return makeHeld(writs)
  })

/** Parameters of a root writ (section 2). */
export interface RootParams {
  readonly hld: string
  /** The bounds, checked by section 3 and 3.2 before anything is signed. */
  readonly bnd: { readonly [name: string]: Bound }
  readonly exp: number
  readonly crit?: ReadonlyArray<string>
}

const finishWrit = (unsigned: JsonObject, parents: ReadonlyArray<CheckedWrit>, path: string) =>
  Effect.gen(function* () {
    const json = yield* signed("writ", unsigned)
    const w = yield* verifyWrit(json, path)
    const me = yield* ownKey
    const chain = [...parents, w]
    const issued: Issued = {
      writ: w.json as unknown as Writ,
      id: w.id,
      chain: chain.map((x) => x.json as unknown as Writ),
      ...(w.value.hld === me ? { held: makeHeld(chain) } : {})
    }
    return issued
  })

/** Issue a root writ from the Signer's key (section 2, `prv` null). */
export const issueRoot = (p: RootParams): Effect.Effect<Issued, WritError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    yield* checkKey(p.hld, "hld")
    const bnd = yield* checkBounds(p.bnd)
    const iss = yield* ownKey
    const nnc = yield* randomB64
    const unsigned: JsonObject = {
      v: 1, typ: "writ", iss, hld: p.hld, bnd: bnd as unknown as Json, prv: null, exp: p.exp, nnc,
      ...(p.crit === undefined ? {} : { crit: p.crit })
    }
    return yield* finishWrit(unsigned, [], "writ")
  })

/** How a child narrows its parent: the new holder, an `exp` no later than the parent's (default:
 * the parent's), and bounds that replace or add to the parent's. Bounds not named are inherited. */
export interface DelegateParams {
  readonly hld: string
  readonly exp?: number
  readonly bnd?: { readonly [name: string]: Bound }
}

/** Section 7.5: issue a child of a writ the Signer holds, narrowing it. Refused with the section 4
 * reason (`not_narrowed`, or `depth`) before signing when the child would not be a valid child. */
export const delegate = (held: HeldWrit, p: DelegateParams): Effect.Effect<Issued, WritError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    if (!(held instanceof HeldWrit)) return yield* Effect.fail(writError("malformed", "held", "not a HeldWrit"))
    const parent = held.leaf
    const me = yield* ownKey
    // The Signer is the parent's holder (section 4 step 1), or it does not hold the parent.
    if (parent.value.hld !== me) return yield* Effect.fail(writError("chain_broken", "held", "the parent is not held by this key"))
    yield* checkKey(p.hld, "hld")
    const bnd = yield* checkBounds({ ...parent.value.bnd, ...(p.bnd ?? {}) })
    const nnc = yield* randomB64
    const unsigned: JsonObject = {
      v: 1, typ: "writ", iss: me, hld: p.hld, bnd: bnd as unknown as Json, prv: parent.id,
      exp: p.exp ?? parent.value.exp, nnc
    }
    // Section 4 on the would-be child before any signature: steps 1 to 5, then depth. The check
    // runs on an unsigned draft whose identity does not matter to it.
    const draft: CheckedWrit = {
      json: unsigned,
      value: { ...(unsigned as unknown as Writ), sig: "" },
      canonical: "",
      id: ""
    }
    yield* checkChild(draft, parent, "writ")
    yield* checkDepth([...held.chain, draft])
    return yield* finishWrit(unsigned, held.chain, "writ")
  })

// ---------------------------------------------------------------------------------------------
// Calls.

export interface CallParams {
  /** The chain, root first; its leaf was issued by the Signer (forward) or the Signer issued
   * some writ in it (standing). */
  readonly chain: ReadonlyArray<Writ> | ReadonlyArray<JsonObject>
  readonly op: string
  readonly args: JsonObject
  /** The idempotency key; default 16 random bytes. A retry reuses the signed call instead. */
  readonly id?: string
}

/** Make and sign a call (section 5); the result passes `verifyCall` (no clock) or is refused with
 * its reason, e.g. `out_of_bounds` for arguments the leaf does not admit. */
export const makeCall = (p: CallParams): Effect.Effect<VerifiedCall, WritError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    const from = yield* ownKey
    const id = p.id ?? (yield* randomB64)
    const json = yield* signed("call", { v: 1, typ: "call", id, chain: p.chain as unknown as Json, from, op: p.op, args: p.args })
    return yield* verifyCall(json)
  })

// ---------------------------------------------------------------------------------------------
// Tallies.

export interface TallyParams {
  /** Identity of the call answered and of its leaf writ, and its op. */
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st: TallyStatus
  /** Required unless `st` is ok. */
  readonly err?: TallyErr | null
  /** The result body, whose hash becomes `out`; absent means `out` null. */
  readonly body?: Json
  readonly used?: { readonly [k: string]: number }
  readonly rev?: { readonly until: number } | null
  readonly sub?: ReadonlyArray<JsonObject>
  readonly wrt?: ReadonlyArray<Writ> | ReadonlyArray<JsonObject>
}

/** Sign a tally (section 6) with the Signer (the leaf holder, or for a `wrong_executor` refusal
 * the receiving party). The result passes section 6.1 steps 1 to 5 or is refused. */
export const signTally = (p: TallyParams): Effect.Effect<CheckedTally, WritError, Signer> =>
  Effect.gen(function* () {
    const unsigned: JsonObject = {
      v: 1,
      typ: "tally",
      call: p.call,
      writ: p.writ,
      op: p.op,
      acc: p.acc,
      st: p.st,
      err: (p.err ?? null) as Json,
      out: p.body === undefined ? null : hashOf(p.body),
      used: p.used ?? {},
      rev: p.rev ?? null,
      sub: (p.sub ?? []) as Json,
      wrt: (p.wrt ?? []) as unknown as Json
    }
    return yield* checkTally(yield* signed("tally", unsigned), "tally")
  })

/** The pending tally of section 6 for an accepted call. */
export const signPendingTally = (p: { readonly call: string; readonly writ: string; readonly op: string; readonly acc: number }) =>
  signTally({ ...p, st: "pending", err: { code: "pending" } })

// ---------------------------------------------------------------------------------------------
// Revokes and acks.

/** Make and sign a revoke (section 9.1): of one writ, given the chain root to that writ, or
 * key-wide (`"*"`) for every writ the Signer's key issued. The result passes section 9.1. */
export const makeRevoke = (
  p: { readonly chain: ReadonlyArray<Writ> | ReadonlyArray<JsonObject> } | { readonly writ: "*" }
): Effect.Effect<VerifiedRevoke, WritError, Signer> =>
  Effect.gen(function* () {
    const iss = yield* ownKey
    let writ: string
    let chain: ReadonlyArray<Json>
    if ("writ" in p) {
      writ = "*"
      chain = []
    } else {
      const writs = yield* verifyChain(p.chain)
      writ = writs[writs.length - 1].id
      chain = p.chain as unknown as ReadonlyArray<Json>
    }
    return yield* verifyRevoke(yield* signed("revoke", { v: 1, typ: "revoke", writ, iss, chain }))
  })

/** The body of an ack (section 9.4). */
export interface AckBodyValue {
  readonly held: ReadonlyArray<{ readonly call: string; readonly tally: string }>
  readonly open: ReadonlyArray<string>
}

/** Make and sign an ack (section 9.4) of the revoke with identity `revoke`, recorded at `rcv`. The
 * body's lists are sorted as section 9.4 requires (ascending call identity, ASCII bytes) for
 * `held`; `open` keeps the revoke answer's order, which the caller supplies. */
export const makeAck = (p: {
  readonly revoke: string
  readonly rcv: number
  readonly body: AckBodyValue
}): Effect.Effect<{ readonly ack: CheckedAck; readonly body: AckBodyValue }, WritError, Signer> =>
  Effect.gen(function* () {
    const iss = yield* ownKey
    const held = [...p.body.held].sort((a, b) => (a.call < b.call ? -1 : a.call > b.call ? 1 : 0))
    const body: AckBodyValue = { held, open: p.body.open }
    const out = hashOf(body as unknown as Json)
    const ack = yield* verifyAck(yield* signed("ack", { v: 1, typ: "ack", revoke: p.revoke, iss, rcv: p.rcv, out }))
    return { ack, body }
  })
