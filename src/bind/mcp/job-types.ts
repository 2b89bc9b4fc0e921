// The shapes a job tool is made of (SPEC-mcp-ts `job()` config and step 11's outcome), shared by
// the call pipeline (call.ts), apply.ts and the registration (job.ts).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { JobReceipt, PlanSpec } from "../../yea/approval/index.js"
import type { Extra } from "./context.js"

/** A plan as a job returns it: the contract's plan plus the code that carries it out. */
export interface JobPlan extends PlanSpec {
  readonly apply: () => Promise<unknown>
}

/** What `plan()` may return: plans, or a question back to the model (returned as is). */
export type PlanOutcome = ReadonlyArray<JobPlan> | { readonly clarify: string }

export interface JobDefinition {
  readonly name: string
  readonly risk?: "low" | "medium" | "high"
  readonly plan: (input: Record<string, unknown>, extra: Extra) => Promise<PlanOutcome>
  readonly revertible: boolean
  readonly confirmWith?: (plan: PlanSpec, input: Record<string, unknown>) => string | undefined
  /** guard: an original result that is a failure (`isError`, `input_required`) releases and writes no receipt. */
  readonly isFailure?: (result: unknown) => boolean
  /** How a successful apply becomes the tool result (guard: the original result, receipt in `_meta`). */
  readonly finish: (applied: Applied) => CallToolResult
}


export type Applied =
  | { readonly ok: true; readonly receipt: JobReceipt; readonly result: unknown; readonly raw: unknown; readonly note?: string }
  | { readonly ok: false; readonly result: CallToolResult; /** guard: the original callback's own failed result. */ readonly original?: true }

