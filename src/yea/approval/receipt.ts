// A job's receipt (SPEC-approval §5 step 5, §7; SPEC-mcp-ts "How a call runs" step 11): what ran,
// for whom, and until when it can be undone. One Schema for the wire and the store row.
import { Schema } from "effect"
import { Uses } from "../measure.js"
import { PlanEffect } from "./plan.js"

/** `r_` and 12 base64url characters: the only ids undo looks up (a path like `../x` never is one). */
export const RECEIPT_ID = /^r_[A-Za-z0-9_-]{12}$/

export const JobReceipt = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(RECEIPT_ID)),
  /** The service id (server key) that ran it: a store shared by several servers keeps them apart. */
  service: Schema.String,
  proposal: Schema.String,
  capability: Schema.String,
  summary: Schema.String,
  at: Schema.Int,
  effects: Schema.Array(PlanEffect),
  uses: Schema.optional(Uses),
  undo: Schema.NullOr(Schema.Struct({ until: Schema.Int })),
  tool: Schema.String,
  input: Schema.Unknown,
  planHash: Schema.String,
  /** Who called (§4 binding): undo runs only for the same principal. */
  sub: Schema.String,
  result: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "JobReceipt" })
export type JobReceipt = typeof JobReceipt.Type
