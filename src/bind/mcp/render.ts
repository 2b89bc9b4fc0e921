// Tool results of the MCP binding (SPEC-mcp-ts "Results and annotations"): text content is always
// Lens for the model, hardened (service text escaped with `printable`, because it may come from
// another party), and `structuredContent` carries the same as data with the raw strings.
// Refusals and failures are `isError: true` results, so the model sees the reason and the fix.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { planLines, type HashedPlan, type JobReceipt } from "../../yea/approval/index.js"
import { HardenedReply } from "../../yea/lens/reply.js"
import { printable } from "../../yea/lens/printable.js"

export const textResult = (lines: ReadonlyArray<string>, structured?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: lines.join("\n") }],
  ...(structured === undefined ? {} : { structuredContent: structured })
})

export const errorResult = (lines: ReadonlyArray<string>, structured?: Record<string, unknown>): CallToolResult => ({
  ...textResult(lines, structured),
  isError: true
})

/** Plans as data: what `structuredContent.plans` holds (no `apply`, no `data`). */
export const plansData = (plans: ReadonlyArray<HashedPlan>) =>
  plans.map((p) => ({ tool: p.tool, planHash: p.planHash, risk: p.risk, undoable: p.undoable, summary: p.plan.summary, effects: p.plan.effects, ...(p.plan.uses === undefined ? {} : { uses: p.plan.uses }), ...(p.plan.undoWindow === undefined ? {} : { undoWindow: p.plan.undoWindow }) }))

export const planListLines = (plans: ReadonlyArray<HashedPlan>): Array<string> => {
  const out: Array<string> = [plans.length === 1 ? "1 plan:" : `${plans.length} plans:`]
  plans.forEach((p, i) => planLines(p, i, out))
  return out
}

/** A receipt in hardened Lens (SPEC §9.2's RECEIPT rendering over the job receipt). */
export const receiptLines = (r: JobReceipt): Array<string> =>
  HardenedReply.lensReply({ kind: "RECEIPT", auto: true, receipt: { id: r.id, summary: r.summary, undo: r.undo, effects: r.effects } }).split("\n")

export const safe = (text: string): string => printable(text)

/** A result that JSON can carry: a circular or bigint result becomes null with a note (SPEC-mcp-ts step 11). */
export const jsonSafe = (v: unknown): { readonly value: unknown; readonly note?: string } => {
  if (v === undefined) return { value: null }
  try {
    return { value: JSON.parse(JSON.stringify(v)) as unknown }
  } catch (e) {
    return { value: null, note: `the result could not be serialized (${e instanceof Error ? e.message : String(e)})` }
  }
}
