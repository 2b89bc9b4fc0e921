// Job tools, `guard()` and the undo tool on the MCP SDK 1.x `McpServer` (SPEC-mcp-ts "The API").
//
// SDK 1.x seams (README "YEA for MCP" lists each difference from the 2.x plugin):
// - input schemas are zod raw shapes, so `preview` is added to the author's shape
//   (`preview: z.boolean().optional()`) and taken off before planning, instead of a wrapper
//   Standard Schema;
// - `guard` replaces the handler with `RegisteredTool.disable/update/enable` (no tool middleware in
//   1.x either) and reads the tool's name from the private `_registeredTools` registry;
// - "can the client ask" is `server.server.getClientCapabilities()?.elicitation?.form`, the check
//   `elicitInput` itself makes; the form is sent with `server.server.elicitInput` inside the call.
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Data, Effect } from "effect"
import { z } from "zod"
import { unixSeconds } from "../../kernel/clock.js"
import { undoJob, type PlanSpec } from "../../yea/approval/index.js"
import { runJobCall } from "./call.js"
import type { Applied, JobDefinition, JobPlan, PlanOutcome } from "./job-types.js"
import type { ApprovalContext, Extra } from "./context.js"
import { errorResult, receiptLines, safe, textResult } from "./render.js"
import { FORM_TIMEOUT_MS } from "./keep-alive.js"

type Shape = Record<string, z.ZodType>

class NoRevert extends Data.TaggedError("NoRevert") {}
class RevertFailed extends Data.TaggedError("RevertFailed")<{ readonly error: unknown }> {}

export interface RevertArgs {
  readonly input: unknown
  readonly planHash: string
  readonly result: unknown
}
export type Revert = (args: RevertArgs, extra: Extra) => Promise<void>

export interface JobConfig {
  readonly title?: string
  readonly description?: string
  readonly annotations?: ToolAnnotations
  /** A zod raw shape (SDK 1.x). It may not have a `preview` member. */
  readonly inputSchema: Shape
  readonly risk?: "low" | "medium" | "high"
  /** Returns plans, or `{clarify}`. It must not change anything: it runs on preview and every retry. */
  readonly plan: (input: Record<string, unknown>, extra: Extra) => Promise<PlanOutcome>
  readonly revert?: Revert
  readonly confirmWith?: (plan: PlanSpec, input: Record<string, unknown>) => string | undefined
}

interface ServerState {
  reverts: Map<string, Revert>
  undo?: RegisteredTool
  guarded: Set<RegisteredTool>
}
const states = new WeakMap<McpServer, ServerState>()
const stateOf = (server: McpServer): ServerState => {
  let s = states.get(server)
  if (s === undefined) states.set(server, (s = { reverts: new Map(), guarded: new Set() }))
  return s
}

/** The SDK keeps its registry private; `guard` and the undo check read it through this narrow cast. */
const registryOf = (server: McpServer): Record<string, RegisteredTool> =>
  (server as unknown as { _registeredTools: Record<string, RegisteredTool> })._registeredTools

const withPreview = (shape: Shape): Shape => {
  if (Object.prototype.hasOwnProperty.call(shape, "preview")) throw new Error("a job's input schema can't have a preview member: the preview flag would shadow it")
  return { ...shape, preview: z.boolean().optional() }
}

const splitPreview = (args: unknown): { input: Record<string, unknown>; preview: boolean } => {
  const { preview, ...input } = (args ?? {}) as Record<string, unknown>
  return { input, preview: preview === true }
}

const callbacks = (server: McpServer) => ({
  canElicit: () => server.server.getClientCapabilities()?.elicitation?.form !== undefined,
  elicit: (message: string, requestedSchema: Record<string, unknown>) =>
    server.server.elicitInput({ mode: "form", message, requestedSchema: requestedSchema as never }, { timeout: FORM_TIMEOUT_MS }) as Promise<{ action: string; content?: Record<string, unknown> }>
})

const jobResult = (a: Applied): CallToolResult =>
  a.ok ? textResult([...receiptLines(a.receipt), ...(a.note === undefined ? [] : [safe(a.note)])], { receipt: a.receipt, result: a.result }) : a.result

/** Registers the `undo` tool once per server, the first time a job with `revert` is added. */
const ensureUndo = (ctx: ApprovalContext, server: McpServer, name: string, revert: Revert | undefined) => {
  const st = stateOf(server)
  const existing = registryOf(server).undo
  if (existing !== undefined && existing !== st.undo) throw new Error("this server already has a tool named undo that isn't YEA's")
  if (revert === undefined) return
  st.reverts.set(name, revert)
  if (st.undo !== undefined) return
  st.undo = server.registerTool(
    "undo",
    {
      description: "Undo a job by its receipt id, within its undo window. Needs no approval.",
      inputSchema: { receipt: z.string() },
      annotations: { destructiveHint: true, idempotentHint: true, readOnlyHint: false }
    },
    async ({ receipt }, extra) =>
      ctx.run(
        Effect.gen(function* () {
          const now = yield* unixSeconds
          const r = yield* undoJob({ id: receipt, service: ctx.options.serviceId, sub: ctx.sub(extra), now }, (rec): Effect.Effect<void, NoRevert | RevertFailed> => {
            const fn = st.reverts.get(rec.tool)
            if (fn === undefined) return Effect.fail(new NoRevert())
            return Effect.tryPromise({ try: () => fn({ input: rec.input, planHash: rec.planHash, result: rec.result }, extra), catch: (e) => new RevertFailed({ error: e }) })
          })
          return textResult([`↶ undid ${safe(r.id)}: ${safe(r.summary)}`], { undone: r.id })
        }).pipe(
          Effect.catchTags({
            UndoRefused: (e) => Effect.succeed(errorResult([`✗ undo refused: ${e.why}`])),
            ApprovalStoreError: (e) => Effect.succeed(errorResult([`✗ undo refused: the approval store failed (${safe(e.why)})`])),
            // A receipt for a tool with no revert here is "no such receipt" (SPEC-mcp-ts "The undo tool").
            NoRevert: () => Effect.succeed(errorResult(["✗ undo refused: no such receipt"])),
            RevertFailed: ({ error }) => {
              const msg = error instanceof Error ? error.message : String(error)
              const partial = typeof error === "object" && error !== null && (error as { partial?: unknown }).partial === true
              return Effect.succeed(errorResult([partial ? `✗ undo failed part-way: ${safe(msg)}` : `✗ undo failed: ${safe(msg)}`]))
            }
          })
        )
      )
  )
}

/** Registers a job tool (SPEC-mcp-ts `approvals.job`). */
export const job = (ctx: ApprovalContext, server: McpServer, name: string, config: JobConfig): RegisteredTool => {
  const shape = withPreview(config.inputSchema)
  ensureUndo(ctx, server, name, config.revert)
  const def: JobDefinition = { name, risk: config.risk, plan: config.plan, revertible: config.revert !== undefined, confirmWith: config.confirmWith, finish: jobResult }
  const { canElicit, elicit } = callbacks(server)
  const tool = server.registerTool(
    name,
    {
      title: config.title,
      description: config.description,
      inputSchema: shape,
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, ...config.annotations },
      _meta: { "dev.yea/job": { risk: config.risk ?? "medium", undoable: config.revert !== undefined } }
    },
    async (args: unknown, extra: Extra) => {
      const { input, preview } = splitPreview(args)
      return ctx.run(runJobCall(ctx, def, input, preview, extra, canElicit, elicit))
    }
  )
  stateOf(server).guarded.add(tool)
  return tool
}

export interface GuardConfig {
  /** What the call would do, without doing it: the plan's data (SPEC-mcp-ts `guard` `describe`). */
  readonly describe: (input: Record<string, unknown>) => PlanSpec | Promise<PlanSpec>
  readonly risk?: "low" | "medium" | "high"
  readonly revert?: Revert
  readonly confirmWith?: (plan: PlanSpec, input: Record<string, unknown>) => string | undefined
}

const isFailedResult = (r: unknown) =>
  typeof r === "object" && r !== null && ((r as { isError?: unknown }).isError === true || (r as { resultType?: unknown }).resultType === "input_required")

/**
 * Turns a registered tool into a job without rewriting it (SPEC-mcp-ts `approvals.guard`). The
 * original callback becomes the plan's `apply`; its result is returned unchanged, with the receipt
 * in `_meta['dev.yea/receipt']`. If anything throws, the tool stays disabled.
 */
export const guard = (ctx: ApprovalContext, server: McpServer, tool: RegisteredTool, config: GuardConfig): void => {
  const st = stateOf(server)
  if (st.guarded.has(tool)) throw new Error("this tool is already a job")
  const name = Object.entries(registryOf(server)).find(([, t]) => t === tool)?.[0]
  if (name === undefined) throw new Error("the tool is not registered on this server")
  const schema = tool.inputSchema as { shape?: Shape } | undefined
  const shape = schema === undefined ? undefined : schema.shape
  if (schema !== undefined && (shape === undefined || typeof shape !== "object")) throw new Error("guard needs a tool whose input schema is a plain object")
  const wasEnabled = tool.enabled
  tool.disable()
  const original = tool.handler as (...a: Array<unknown>) => Promise<CallToolResult>
  const withShape = shape !== undefined ? withPreview(shape) : undefined
  ensureUndo(ctx, server, name, config.revert)
  const { canElicit, elicit } = callbacks(server)
  const finish = (a: Applied): CallToolResult => {
    if (!a.ok) return a.result
    const raw = a.raw as CallToolResult
    const extraLine = a.note === undefined ? [] : [{ type: "text" as const, text: safe(a.note) }]
    return { ...raw, content: [...(raw.content ?? []), ...extraLine], _meta: { ...(raw._meta ?? {}), "dev.yea/receipt": a.receipt } }
  }
  const run = async (args: unknown, extra: Extra) => {
    const { input, preview } = withShape === undefined ? { input: {}, preview: false } : splitPreview(args)
    const plan = async (i: Record<string, unknown>): Promise<PlanOutcome> => {
      const spec = await config.describe(i)
      const p: JobPlan = { ...spec, apply: () => (withShape === undefined ? original(extra) : original(i, extra)) }
      return [p]
    }
    let fromOriginal = false
    const def: JobDefinition = {
      name,
      risk: config.risk,
      plan,
      revertible: config.revert !== undefined,
      confirmWith: config.confirmWith,
      isFailure: isFailedResult,
      finish: (a) => {
        fromOriginal = a.ok || a.original === true
        return finish(a)
      }
    }
    const result = await ctx.run(runJobCall(ctx, def, input, preview, extra, canElicit, elicit))
    // Clients validate success results against an outputSchema: the plugin's own results are errors.
    return tool.outputSchema !== undefined && !fromOriginal ? { ...result, isError: true } : result
  }
  const callback = (withShape === undefined ? (extra: Extra) => run(undefined, extra) : run) as never
  // SPEC-mcp-ts "Results and annotations": `destructiveHint` is true unless the author set it,
  // since a job changes things; the author's other annotations are kept.
  const annotations = { ...(tool.annotations ?? {}), destructiveHint: tool.annotations?.destructiveHint ?? true }
  tool.update({ callback, annotations, ...(withShape === undefined ? {} : { paramsSchema: withShape as never }), _meta: { ...(tool._meta ?? {}), "dev.yea/job": { risk: config.risk ?? "medium", undoable: config.revert !== undefined } } })
  st.guarded.add(tool)
  if (wasEnabled) tool.enable()
}
