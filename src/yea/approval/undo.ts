// Undo (SPEC-approval §7, approval.json `undo`): `undo({receipt})` runs only within the plan's
// undo window (`until` itself included), only for the same principal, only at the server that ran
// it, and only once. It needs no approval: it restores what the person approved changing. A
// receipt from another server sharing the store, another caller's, or an id outside the receipt
// format is "no such receipt", so undo never tells one caller about another's receipts.
import { Effect, Option } from "effect"
import { ApprovalStore } from "./store.js"
import { undoRefused, type ApprovalStoreError, type UndoRefused } from "./reason.js"
import { RECEIPT_ID, type JobReceipt } from "./receipt.js"

export interface UndoRequest {
  readonly id: string
  readonly service: string
  readonly sub: string
  readonly now: number
}

/** The receipt `id` may be undone by this caller now, or why not. Reads only. */
export const checkUndo = (req: UndoRequest): Effect.Effect<JobReceipt, UndoRefused | ApprovalStoreError, ApprovalStore> =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore
    const none = undoRefused("no such receipt")
    if (!RECEIPT_ID.test(req.id)) return yield* Effect.fail(none)
    const found = yield* store.getReceipt(req.id)
    if (Option.isNone(found) || found.value.service !== req.service || found.value.sub !== req.sub) return yield* Effect.fail(none)
    const r = found.value
    if (r.undo === null) return yield* Effect.fail(undoRefused("this job can never be undone"))
    if (yield* store.isUndone(r.id)) return yield* Effect.fail(undoRefused("this job was already undone"))
    if (req.now > r.undo.until) return yield* Effect.fail(undoRefused("the undo window has closed"))
    return r
  })

/**
 * Undoes a job: the checks, then an atomic claim (a second concurrent undo gets "already undone"),
 * then `revert`, then the done marker. A `revert` that fails leaves the claim, so the job is never
 * reverted twice; its error is the caller's to report.
 */
export const undoJob = <E, R>(req: UndoRequest, revert: (r: JobReceipt) => Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore
    const r = yield* checkUndo(req)
    if (!(yield* store.claimUndo(r.id))) return yield* Effect.fail(undoRefused("this job was already undone"))
    yield* revert(r)
    yield* store.markUndone(r.id)
    return r
  })
