// Declaring a YEA service (docs/build-a-service.md): the id, name, trusted principals and the
// capabilities, each an `ask` (read-only) or an `intent` (plans, then commit and maybe undo). The
// runtime (runtime.ts) does everything else.
//
// A plan's `action` is plain JSON that the capability's `commit` runs later. Keeping it data, not a
// closure, is what lets a proposal survive a restart of the service (proposals live in
// stores, src/yea/state.ts), and lets a replay after a crash find what was planned.
import type { Effect } from "effect"
import type { Capability, ClarifyFrame, ParamSchema } from "../frame.js"
import type { RiskLevel } from "../caveat.js"
import type { Quantity } from "../measure.js"
import type { ProposalEffect } from "../proposal.js"
import type { YeaError } from "../reason.js"

/** What every handler can see about the request. */
export interface HandlerContext {
  readonly params: Readonly<Record<string, unknown>>
  /** The verified proof key, when the request carried one. */
  readonly requester?: string
  /** The principal whose grant authorized the request, when one did. */
  readonly principal?: string
  /** Unix seconds, from the service's Clock. */
  readonly now: number
  /** Streams an EVENT to the requester before the final reply (§2.2, §5). */
  readonly progress: (message: string, progress?: number) => Effect.Effect<void>
}

export interface CommitContext extends Omit<HandlerContext, "params"> {
  /** The proposal being committed: its id doubles as an idempotency key for the handler's own effects. */
  readonly proposal: string
}

/** One way to achieve an intent (becomes a §5.1 proposal). */
export interface Plan {
  readonly summary: string
  readonly effects: ReadonlyArray<ProposalEffect>
  readonly uses?: Readonly<Record<string, Quantity>>
  /** Defaults to the capability's risk. */
  readonly risk?: RiskLevel
  /** Seconds the commit can be undone; absent or null: irreversible. Needs the capability's `undo`. */
  readonly undoWindow?: number | null
  /** Not hashed; may hold floats; must not describe effects (§5.1). */
  readonly data?: unknown
  /** What `commit` will run (JSON). */
  readonly action: unknown
}

export type Clarify = Omit<ClarifyFrame, "yea" | "id" | "re" | "kind" | "lens">

export type PlanOutcome =
  | { readonly _tag: "Plans"; readonly plans: ReadonlyArray<Plan> }
  | { readonly _tag: "Clarify"; readonly clarify: Clarify }

export const plans = (...ps: ReadonlyArray<Plan>): PlanOutcome => ({ _tag: "Plans", plans: ps })
export const clarify = (question: string, options: Clarify["options"]): PlanOutcome => ({ _tag: "Clarify", clarify: { question, options } })

export interface AskSpec<R = never> {
  readonly kind: "ask"
  readonly summary?: string
  readonly params?: ParamSchema
  readonly run: (ctx: HandlerContext) => Effect.Effect<unknown, YeaError, R>
}

export interface IntentSpec<R = never> {
  readonly kind: "intent"
  readonly summary?: string
  readonly params?: ParamSchema
  readonly risk: RiskLevel
  readonly plan: (ctx: HandlerContext) => Effect.Effect<PlanOutcome, YeaError, R>
  /** Runs a committed plan's action, at most once per proposal; its value is the receipt's `result`. */
  readonly commit: (action: unknown, ctx: CommitContext) => Effect.Effect<unknown, YeaError, R>
  /** Reverses a commit within its window; present makes plans with an `undoWindow` undoable. */
  readonly undo?: (action: unknown, result: unknown, ctx: CommitContext) => Effect.Effect<unknown, YeaError, R>
}

export type CapabilitySpec<R = never> = AskSpec<R> | IntentSpec<R>

export interface ServiceSpec<R = never> {
  /** The audience id (§4.1): proofs are bound to it, keep it stable. */
  readonly id: string
  readonly name: string
  readonly summary?: string
  /** Principals whose grants this service accepts (§6.4 step 4). */
  readonly trust: ReadonlyArray<string>
  /** Also require grants for ASK and INTENT (§3). */
  readonly requireGrants?: boolean
  /** Seconds a proposal stays committable; default 600, rounded up to whole minutes (§5.1). */
  readonly proposalTtl?: number
  readonly capabilities: Readonly<Record<string, CapabilitySpec<R>>>
}

export const ask = <R>(spec: Omit<AskSpec<R>, "kind">): AskSpec<R> => ({ kind: "ask", ...spec })
export const intent = <R>(spec: Omit<IntentSpec<R>, "kind">): IntentSpec<R> => ({ kind: "intent", ...spec })

/** The BRIEF entry of a capability (§4.1). */
export const capabilityEntry = (name: string, c: CapabilitySpec<unknown>): Capability => ({
  name,
  kind: c.kind,
  ...(c.summary !== undefined ? { summary: c.summary } : {}),
  ...(c.params !== undefined ? { params: c.params } : {}),
  ...(c.kind === "intent" ? { risk: c.risk } : {})
})
