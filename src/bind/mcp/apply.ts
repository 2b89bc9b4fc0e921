// Step 11 (SPEC-mcp-ts "How a call runs", SPEC-approval §5 step 5): apply once, then settle the
// reservations and record the receipt. A failed apply releases and says nothing changed; a
// `PartialApplyError` (any error with `partial: true`) keeps the reservations (it can only
// over-count) and says what was left; anything failing after a successful apply never says
// "nothing ran": the action happened, and the result says whether undo is available.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { unixSeconds } from "../../kernel/clock.js"
import { RandomBytes } from "../../kernel/services.js"
import { ApprovalStore, type HashedPlan, type JobReceipt } from "../../yea/approval/index.js"
import type { ApprovalContext } from "./context.js"
import { errorResult, jsonSafe, safe } from "./render.js"
import type { Applied, JobDefinition } from "./job-types.js"

const message = (e: unknown) => (e instanceof Error ? e.message : String(e))
const isPartial = (e: unknown) => typeof e === "object" && e !== null && (e as { partial?: unknown }).partial === true

export const newReceiptId = Effect.map(Effect.flatMap(RandomBytes, (r) => r.bytes(9)), (b) => `r_${encodeBase64url(b)}`)

export const applyPlan = (
  ctx: ApprovalContext,
  job: JobDefinition,
  plan: HashedPlan,
  input: unknown,
  sub: string,
  apply: () => Promise<unknown>,
  reservations: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const store = yield* ApprovalStore
    const releaseAll = Effect.forEach(reservations, (r) => Effect.ignore(store.release(r)), { discard: true })
    const done = yield* Effect.either(Effect.tryPromise({ try: apply, catch: (e) => e }))
    if (done._tag === "Left") {
      if (isPartial(done.left)) {
        return { ok: false, result: errorResult([`✗ ${safe(plan.plan.summary)} failed part-way: ${safe(message(done.left))}`]) } as Applied
      }
      yield* releaseAll
      return { ok: false, result: errorResult([`✗ the approval was used and nothing changed: ${safe(message(done.left))}`]) } as Applied
    }
    if (job.isFailure?.(done.right) === true) {
      yield* releaseAll
      return { ok: false, result: done.right as CallToolResult, original: true } as Applied
    }
    const now = yield* unixSeconds
    const { value, note } = jsonSafe(done.right)
    const receipt: JobReceipt = {
      id: yield* newReceiptId,
      service: ctx.options.serviceId,
      proposal: plan.planHash,
      capability: plan.tool,
      summary: plan.plan.summary,
      at: now,
      effects: plan.plan.effects,
      ...(plan.plan.uses === undefined ? {} : { uses: plan.plan.uses }),
      undo: plan.undoable && plan.plan.undoWindow !== undefined ? { until: now + plan.plan.undoWindow } : null,
      tool: plan.tool,
      input,
      planHash: plan.planHash,
      sub,
      result: value
    }
    const recorded = yield* Effect.either(
      Effect.zipRight(Effect.forEach(reservations, (r) => store.settle(r), { discard: true }), store.putReceipt(receipt))
    )
    if (recorded._tag === "Left") {
      const undo = "undo is not available (the receipt could not be saved)"
      return { ok: true, receipt, result: value, raw: done.right, note: `the action happened, but recording it failed (${safe(recorded.left.why)}); ${undo}` } as Applied
    }
    return { ok: true, receipt, result: value, raw: done.right, ...(note === undefined ? {} : { note }) } as Applied
  })
