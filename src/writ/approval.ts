// Approval as delegation (Appendix E, non-normative; docs/approval.md): a person lifts one action
// above an agent's line with an ordinary writ. No new object and no new reason code: the approval
// is a child (section 4) of the approver's own writ, and the executor runs sections 4 and 7 as
// always, not knowing approval exists.
//
//   approvalPoint   the first writ in the chain, root first, whose `act` and application bounds do
//                   not admit the call (section 3.1, 7.2); its `iss` is the approver.
//   approveAt       the writ that replaces the one at a position, signed by the Signer: a root
//                   (position 0) or a child of the writ above, to the same holder, with `act` the
//                   call's `op`, every bound of the writ above pinned to the call's argument, every
//                   other argument pinned by a one-element `set`, `count` 1, `exp` no later than
//                   the writ above. The approver runs it at the approval point; each holder below
//                   runs it again at the next position, under the new chain.
//
// Two pins are ceilings, not values (Appendix E, last paragraph): a `max` or `total` pinned to an
// amount admits any smaller one, and an `act` pinned to an operation admits the operations below it.
import { Effect, Schema } from "effect"
import { Stackless } from "../kernel/stackless.js"
import type { Json, JsonObject } from "../kernel/json.js"
import { type RandomBytes, Signer } from "../kernel/services.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import { applicationBounds, type Bound, boundSatisfied, has, isInteger, prefixMatches, reservedNames } from "./bound.js"
import { isStandingOp } from "./call.js"
import { verifyChain } from "./chain.js"
import { delegate, holdChain, issueRoot, type Issued } from "./issue.js"
import { type WritError, writError } from "./reason.js"
import { type CheckedWrit, verifyWrit } from "./writ.js"

/** Where approval does not apply. Implementation codes (section 11, last paragraph), defined here
 * once; a chain or writ that fails a protocol check fails with its section 11 `WritError`. */
export const ApprovalReason = Schema.Literal(
  /** Every writ in the chain admits the call: nothing needs approving. */
  "approval/admitted",
  /** An argument a one-element `set` cannot pin (not a string or an integer, section 3). */
  "approval/unpinnable",
  /** The Signer is not the key that signs at this position (the replaced writ's `iss`). */
  "approval/not_approver"
)
export type ApprovalReason = typeof ApprovalReason.Type

export class ApprovalError extends Stackless(Schema.TaggedError<ApprovalError>()("ApprovalError", {
  reason: ApprovalReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
})) {}

/** The operation and arguments of the refused call (a signed call carries them; so may a draft). */
export interface Action {
  readonly op: string
  readonly args: JsonObject
}

/** Whether a writ's `act` and application bounds admit the action (sections 3.1, 7.2). */
export const admits = (writ: CheckedWrit, action: Action): boolean => {
  const bnd = writ.value.bnd
  if (isStandingOp(action.op) || !prefixMatches(bnd.act.v as string, action.op)) return false
  return applicationBounds(bnd).every(([n, b]) => has(action.args, n) && boundSatisfied(b, action.args[n]))
}

export interface ApprovalPoint {
  /** Zero-based position, root first, of the first writ that does not admit the action. */
  readonly index: number
  /** Its `iss`: the holder of the writ above it or, for a root, the one who issued it. */
  readonly approver: string
  /** The verified chain. */
  readonly chain: ReadonlyArray<CheckedWrit>
}

/** Appendix E: the writ whose issuer approves. The chain is verified first (section 4, with its
 * reasons); a standing operation is never approved (`forbidden_op`: section 8 standing is by
 * position, never by `act`). */
export const approvalPoint: (chain: unknown, action: Action) => Effect.Effect<ApprovalPoint, WritError | ApprovalError> = Effect.fn(
  "writ.approvalPoint"
)(function*(chain: unknown, action: Action) {
  const writs = yield* verifyChain(chain)
  if (isStandingOp(action.op)) {
    return yield* Effect.fail(writError("forbidden_op", "op", "a standing operation is authorized by position, never approved"))
  }
  const index = writs.findIndex((w) => !admits(w, action))
  if (index < 0) {
    return yield* Effect.fail(new ApprovalError({ reason: "approval/admitted", path: "chain", message: "every writ in the chain admits the call" }))
  }
  return { index, approver: writs[index].value.iss, chain: writs }
})

/** A bound pinned to one argument value, of the type the writ above gave it (section 4 step 4). */
const pin = (b: Bound, arg: unknown): Bound => {
  switch (b.t) {
    case "max":
    case "total":
      return { t: b.t, v: arg as number }
    case "count":
      // "Used once": 1, or the parent's own value when it is already 0.
      return { t: "count", v: Math.min(1, b.v) }
    case "prefix":
      return { t: "prefix", v: arg as string }
    case "set":
      return { t: "set", v: [arg as string | number] }
    case "window":
      return { t: "window", v: [arg as number, arg as number] }
  }
}

/** The count bound an approval carries when the writ above has none. */
export const APPROVAL_COUNT = "approval"

/** The bounds of an approval under `above` (undefined for a root) for `action` (Appendix E). The
 * writ above admits the action, so every pin narrows it. */
export const approvalBounds = (
  above: CheckedWrit | undefined,
  action: Action
): Effect.Effect<Record<string, Bound>, ApprovalError> =>
  Effect.gen(function*() {
    const bnd: Record<string, Bound> = {}
    const set = (n: string, b: Bound) => Object.defineProperty(bnd, n, { value: b, enumerable: true, writable: true, configurable: true })
    const parent = above?.value.bnd ?? { act: { t: "prefix" as const, v: action.op } }
    set("act", { t: "prefix", v: action.op })
    for (const [n, b] of Object.entries(parent) as Array<[string, Bound]>) {
      if (n === "act") continue
      // `hld` and `depth` bound the chain, not the action: kept as they are (section 3.2).
      if (n === "hld" || n === "depth") set(n, b)
      else set(n, pin(b, action.args[n]))
    }
    const counted = Object.values(bnd).some((b) => b.t === "count")
    // Every other argument, pinned by a one-element set, so the approval names one action.
    for (const n of Object.keys(action.args).sort()) {
      if (has(bnd, n) || reservedNames.includes(n)) continue
      const v: Json = action.args[n]
      if (!(typeof v === "string" || isInteger(v))) {
        return yield* Effect.fail(new ApprovalError({ reason: "approval/unpinnable", path: `args.${n}`, message: "a set pins strings and integers only" }))
      }
      set(n, { t: "set", v: [v] })
    }
    // "Used once": the pinned counts above, or a count of its own.
    if (!counted && !has(bnd, APPROVAL_COUNT)) set(APPROVAL_COUNT, { t: "count", v: 1 })
    return bnd
  })

export interface ApproveParams {
  /** The new chain above the position, root first: empty to replace the root. */
  readonly above: ReadonlyArray<Json>
  /** The writ being replaced (of the chain the refused call ran under): its holder is kept. */
  readonly replaced: Json
  readonly action: Action
  /** The approval's expiry, no later than the writ above's (section 4 step 3); default that one's,
   * or for a root the replaced root's. */
  readonly exp?: number
}

/** Appendix E: the Signer issues the writ in place of `replaced`, under `above`. The Signer must be
 * the replaced writ's `iss` (`approval/not_approver`), and, below a root, the holder of the writ
 * above (section 4: `delegate` refuses anything that widens it, before signing). */
export const approveAt: (p: ApproveParams) => Effect.Effect<Issued, WritError | ApprovalError, Signer | RandomBytes> = Effect.fn(
  "writ.approveAt"
)(function*(p: ApproveParams) {
  const replaced = yield* verifyWrit(p.replaced, "replaced")
  const me = didKeyFromPublicKey((yield* Signer).publicKey)
  if (replaced.value.iss !== me) {
    return yield* Effect.fail(
      new ApprovalError({ reason: "approval/not_approver", path: "replaced.iss", message: `this writ is replaced by its issuer ${replaced.value.iss}` })
    )
  }
  if (isStandingOp(p.action.op)) return yield* Effect.fail(writError("forbidden_op", "op", "a standing operation is never approved"))
  if (p.above.length === 0) {
    const exp = p.exp ?? replaced.value.exp
    return yield* issueRoot({ hld: replaced.value.hld, bnd: yield* approvalBounds(undefined, p.action), exp })
  }
  const held = yield* holdChain(p.above)
  const above = held.leaf
  if (!admits(above, p.action)) {
    return yield* Effect.fail(writError("not_narrowed", "above", "the writ above does not admit the call: its issuer's approval is needed first"))
  }
  const bnd = yield* approvalBounds(above, p.action)
  // Every bound of the writ above is overridden by its pin; `delegate` adds none of its own, and
  // refuses an `exp` after the writ above's (section 4 step 3, `not_narrowed`).
  return yield* delegate(held, { hld: replaced.value.hld, bnd, exp: p.exp ?? above.value.exp })
})
