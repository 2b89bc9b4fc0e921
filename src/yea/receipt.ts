// Receipts (SPEC §5.2) and what UNDO authorization reads from them (§4.5, §6.3).
import { Schema } from "effect"
import type { AuthorizeRequest } from "./authorize.js"
import { Uses } from "./measure.js"
import { ProposalEffect } from "./proposal.js"

/** `null` when the action cannot be undone, else `{"until": unix seconds}` (§5.2). */
export const ReceiptUndo = Schema.NullOr(Schema.Struct({ until: Schema.Int }))

/** A receipt (§5.2). An undo receipt has `undoes` set and `undo: null`. */
export const Receipt = Schema.Struct({
  id: Schema.String,
  proposal: Schema.String,
  capability: Schema.String,
  summary: Schema.String,
  at: Schema.Int,
  effects: Schema.Array(ProposalEffect),
  undo: ReceiptUndo,
  uses: Schema.optional(Uses),
  result: Schema.optional(Schema.Unknown),
  undoes: Schema.optional(Schema.String)
}).annotations({ identifier: "Receipt" })
export type Receipt = typeof Receipt.Type

/**
 * The request an UNDO of `receipt` is authorized as: `can` is checked against the capability of
 * the receipt being undone (§6.3), not anything the client names. The grant must also be rooted in
 * the principal of the original commit (§4.5): pass it as `principal` to `authorize`.
 */
export const undoRequest = (receipt: Pick<Receipt, "capability">, service: string): AuthorizeRequest => ({
  service,
  verb: "UNDO",
  capability: receipt.capability
})
