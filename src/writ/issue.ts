// Issuing, spec sections 2, 4, 5, 6, 9.1, 9.4 and 7.5: make and sign each object type with the
// `Signer` service, drawing `nnc` and `id` from the `RandomBytes` service.
//
// Every object is built as the encoded side of its `Unsigned*` Schema (src/writ/wire.ts), so the
// compiler holds issuing to the wire shape, and signed by the one signing function (`signObject`,
// src/writ/sign.ts) that the executor uses too. Writs and tallies received as data are typed by
// decoding them through their Schemas, never by a cast.
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
import { Effect, Option, Schema } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { encodeBase64url } from "../kernel/base64url.js"
import { didKeyFromPublicKey, publicKeyFromDidKey } from "../kernel/didkey.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import type { Bound } from "./bound.js"
import { checkBounds } from "./bound.js"
import { type UnsignedCall, type VerifiedCall, verifyCall } from "./call.js"
import { checkChild, checkDepth, verifyChain } from "./chain.js"
import { type WritError, writError } from "./reason.js"
import { type UnsignedRevoke, type VerifiedRevoke, verifyRevoke } from "./revoke.js"
import { hashOf, signObject } from "./sign.js"
import { type CheckedTally, checkTally, Tally, type TallyContent, unsignedTally } from "./tally.js"
import { type AckBody, type CheckedAck, type UnsignedAck, verifyAck } from "./ack.js"
import { type CheckedWrit, type UnsignedWrit, verifyWrit, Writ } from "./writ.js"

/** Section 1.6: `id` and `nnc` carry 16 random bytes. */
const RANDOM_BYTES = 16

const randomB64 = Effect.flatMap(RandomBytes, (r) => Effect.map(r.bytes(RANDOM_BYTES), encodeBase64url))

/** The Signer's own key as a did:key (section 1.3). */
export const ownKey: Effect.Effect<string, never, Signer> = Effect.map(Signer, (s) => didKeyFromPublicKey(s.publicKey))

const checkKey = (k: string, path: string): Effect.Effect<void, WritError> =>
  Option.isSome(publicKeyFromDidKey(k)) ? Effect.void : Effect.fail(writError("bad_key", path, "not an Ed25519 did:key"))

const decodeWrits = Schema.decodeUnknown(Schema.Array(Writ))
/** The wire writs of a verified chain. A writ that passed section 6.1 decodes under the `Writ`
 * Schema (test/writ-properties/schema.property.test.ts holds the two together), so a failure here
 * is a defect, not an input error. */
const wireWrits = (chain: ReadonlyArray<CheckedWrit>): Effect.Effect<ReadonlyArray<Writ>> =>
  Effect.orDie(decodeWrits(chain.map((w) => w.json)))

/** Objects received as data, typed by their Schema; what it refuses is `malformed` at `path`. */
const decodeAt = <A, I>(schema: Schema.Schema<A, I>, u: unknown, path: string): Effect.Effect<A, WritError> =>
  Effect.mapError(Schema.decodeUnknown(schema)(u), (e) => writError("malformed", path, e.message.split("\n")[0]))

// ---------------------------------------------------------------------------------------------
// Held writs.

const heldToken: unique symbol = Symbol("HeldWrit")
let makeHeld: (chain: ReadonlyArray<CheckedWrit>, writs: ReadonlyArray<Writ>) => HeldWrit

/** A chain whose leaf is held by the Signer's key: the only thing a child can be delegated from.
 * Constructed only inside this module (section 7.5). */
export class HeldWrit {
  /** The verified chain, root first; its last writ is the held one. */
  readonly chain: ReadonlyArray<CheckedWrit>
  /** The chain as wire objects, root first (what a call under it carries). */
  readonly writs: ReadonlyArray<Writ>
  private constructor(token: typeof heldToken, chain: ReadonlyArray<CheckedWrit>, writs: ReadonlyArray<Writ>) {
    if (token !== heldToken) throw new TypeError("HeldWrit is produced by issuing or by holdChain")
    this.chain = chain
    this.writs = writs
  }
  static {
    // The one way to construct a HeldWrit, visible only inside this module.
    makeHeld = (chain, writs) => new HeldWrit(heldToken, Object.freeze([...chain]), Object.freeze([...writs]))
  }
  get leaf(): CheckedWrit {
    return this.chain[this.chain.length - 1]
  }
}

/** A writ this Signer issued: the signed writ, its identity, and the chain it ends (root first).
 * `held` is present when the writ was issued to the Signer's own key. */
export interface Issued {
  readonly writ: Writ
  /** The writ as the JSON object it is sent and recorded as (section 1). */
  readonly json: JsonObject
  readonly id: string
  readonly chain: ReadonlyArray<Writ>
  /** The chain, root first, as the JSON objects a call carries (section 5). */
  readonly chainJson: ReadonlyArray<JsonObject>
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
    return makeHeld(writs, yield* wireWrits(writs))
  })

/** Parameters of a root writ (section 2). */
export interface RootParams {
  readonly hld: string
  /** The bounds, checked by section 3 and 3.2 before anything is signed. */
  readonly bnd: { readonly [name: string]: Bound }
  readonly exp: number
  readonly crit?: ReadonlyArray<string>
}

/** Sign `unsigned`, check it as a receiver would, and return it with the chain it ends. */
const finishWrit = (unsigned: UnsignedWrit, parents: { readonly chain: ReadonlyArray<CheckedWrit>; readonly writs: ReadonlyArray<Writ> }) =>
  Effect.gen(function* () {
    const writ = yield* signObject(unsigned)
    const w = yield* verifyWrit(writ, "writ")
    const me = yield* ownKey
    const chain = [...parents.writs, writ]
    const issued: Issued = {
      writ,
      json: w.json,
      id: w.id,
      chain,
      chainJson: [...parents.chain.map((p) => p.json), w.json],
      ...(w.value.hld === me ? { held: makeHeld([...parents.chain, w], chain) } : {})
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
    const unsigned: UnsignedWrit = {
      v: 1, typ: "writ", iss, hld: p.hld, bnd, prv: null, exp: p.exp, nnc,
      ...(p.crit === undefined ? {} : { crit: p.crit })
    }
    return yield* finishWrit(unsigned, { chain: [], writs: [] })
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
    const unsigned: UnsignedWrit = { v: 1, typ: "writ", iss: me, hld: p.hld, bnd, prv: parent.id, exp: p.exp ?? parent.value.exp, nnc }
    // Section 4 on the would-be child before any signature: steps 1 to 5, then depth. The check
    // runs on an unsigned draft whose identity does not matter to it.
    const draft: CheckedWrit = { json: unsigned, value: { ...unsigned, sig: "" }, canonical: "", id: "" }
    yield* checkChild(draft, parent, "writ")
    yield* checkDepth([...held.chain, draft])
    return yield* finishWrit(unsigned, held)
  })

// ---------------------------------------------------------------------------------------------
// Calls.

export interface CallParams {
  /** The chain, root first; its leaf was issued by the Signer (forward) or the Signer issued
   * some writ in it (standing). Section 4's chain verification runs on it first. */
  readonly chain: ReadonlyArray<Json>
  readonly op: string
  readonly args: JsonObject
  /** The idempotency key; default 16 random bytes. A retry reuses the signed call instead. */
  readonly id?: string
}

/** Make and sign a call (section 5); the result passes `verifyCall` (no clock) or is refused with
 * its reason, e.g. `out_of_bounds` for arguments the leaf does not admit. */
export const makeCall = (p: CallParams): Effect.Effect<VerifiedCall, WritError, Signer | RandomBytes> =>
  Effect.gen(function* () {
    const chain = yield* wireWrits(yield* verifyChain(p.chain))
    const from = yield* ownKey
    const id = p.id ?? (yield* randomB64)
    const unsigned: UnsignedCall = { v: 1, typ: "call", id, chain, from, op: p.op, args: p.args }
    return yield* verifyCall(yield* signObject(unsigned))
  })

// ---------------------------------------------------------------------------------------------
// Tallies.

/** A tally's content (section 6), with sub-tallies and issued writs received as data: decoded by
 * their Schemas (`malformed`). */
export type TallyParams = Omit<TallyContent, "sub" | "wrt"> & {
  readonly sub?: ReadonlyArray<Json>
  readonly wrt?: ReadonlyArray<Json>
}

/** Sign a tally (section 6) with the Signer (the leaf holder, or for a `wrong_executor` refusal
 * the receiving party). The result passes section 6.1 steps 1 to 5 or is refused. */
export const signTally = (p: TallyParams): Effect.Effect<CheckedTally, WritError, Signer> =>
  Effect.gen(function* () {
    const sub = yield* decodeAt(Schema.Array(Tally), p.sub ?? [], "sub")
    const wrt = yield* decodeAt(Schema.Array(Writ), p.wrt ?? [], "wrt")
    return yield* checkTally(yield* signObject(unsignedTally({ ...p, sub, wrt })), "tally")
  })

// ---------------------------------------------------------------------------------------------
// Revokes and acks.

/** Make and sign a revoke (section 9.1): of one writ, given the chain root to that writ, or
 * key-wide (`"*"`) for every writ the Signer's key issued. The result passes section 9.1. */
export const makeRevoke = (
  p: { readonly chain: ReadonlyArray<Json> } | { readonly writ: "*" }
): Effect.Effect<VerifiedRevoke, WritError, Signer> =>
  Effect.gen(function* () {
    const iss = yield* ownKey
    let unsigned: UnsignedRevoke
    if ("writ" in p) {
      unsigned = { v: 1, typ: "revoke", writ: "*", iss, chain: [] }
    } else {
      const writs = yield* verifyChain(p.chain)
      unsigned = { v: 1, typ: "revoke", writ: writs[writs.length - 1].id, iss, chain: yield* wireWrits(writs) }
    }
    return yield* verifyRevoke(yield* signObject(unsigned))
  })

/** The ack of section 9.4 by `iss` of the revoke with identity `revoke`, recorded at `rcv`, whose
 * `out` commits to `body`. Shared by `makeAck` and the executor. */
export const unsignedAck = (p: { readonly revoke: string; readonly iss: string; readonly rcv: number; readonly body: Json }): UnsignedAck =>
  ({ v: 1, typ: "ack", revoke: p.revoke, iss: p.iss, rcv: p.rcv, out: hashOf(p.body) })

/** Make and sign an ack (section 9.4) of the revoke with identity `revoke`, recorded at `rcv`. The
 * body's lists are sorted as section 9.4 requires (ascending call identity, ASCII bytes) for
 * `held`; `open` keeps the revoke answer's order, which the caller supplies. */
export const makeAck = (p: {
  readonly revoke: string
  readonly rcv: number
  readonly body: AckBody
}): Effect.Effect<{ readonly ack: CheckedAck; readonly body: AckBody }, WritError, Signer> =>
  Effect.gen(function* () {
    const iss = yield* ownKey
    const held = [...p.body.held].sort((a, b) => (a.call < b.call ? -1 : a.call > b.call ? 1 : 0))
    const body: AckBody = { held, open: p.body.open }
    const ack = yield* verifyAck(yield* signObject(unsignedAck({ revoke: p.revoke, iss, rcv: p.rcv, body })))
    return { ack, body }
  })
