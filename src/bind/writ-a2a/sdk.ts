// Writ inside a server built with the A2A JavaScript SDK (`@a2a-js/sdk` 1.x, or 0.3): an
// `AgentExecutor` that answers each message through ./server.ts, and a wrapper of the SDK's request
// handler that passes a revoke through `CancelTask` (section 9.1). The SDK's own `cancelTask` hands
// its executor the task id alone, drops the request's metadata (where the revoke travels,
// adoption.md 2b) and refuses a task that is already final, which every Writ task is once its tally
// is out: so the revoke is taken before the SDK's handler sees the request.
//
// Nothing here imports the SDK: its types are met structurally, and the conversions to and from its
// own objects are given by the caller (1.x: `Message.toJSON`, `Task.fromJSON` and
// `AgentEvent.task`, exported by `@a2a-js/sdk` and `@a2a-js/sdk/server`; 0.3: its objects are
// the JSON already).
import { Effect, Either } from "effect"
import type { Executor } from "../../writ/executor/executor.js"
import type { A2aError } from "./errors.js"
import { revokeOfHeader } from "./rest.js"
import { A2A_VERSION, type A2aVersion, CancelTaskParams, Message, REVOKE_HEADER, REVOKE_KEY, type Task } from "./schema.js"
import { decodeJson, handleCancel, handleMessage, rejectedTask } from "./server.js"
import { messageFromV03, taskToV03, V03Message } from "./v03.js"

/** How to run a Writ effect from the SDK's promises: with the Executor provided (a ManagedRuntime's
 * `runPromise`, or `FiberSet.makeRuntime`'s, so the executor's fibers belong to a scope). */
export type RunWrit = <A>(effect: Effect.Effect<A, never, Executor>) => Promise<A>

/** The SDK's objects and JSON of `version`, both ways. */
export interface SdkCodec<M = unknown, T = unknown, E = unknown> {
  readonly version: A2aVersion
  /** The SDK's message as the JSON of `version`. */
  readonly messageToJson: (message: M) => unknown
  /** The JSON of `version` as the SDK's task. */
  readonly taskFromJson: (json: unknown) => T
  /** A task as the event the SDK's bus takes (1.x wraps it; 0.3 takes the task). Default: the task. */
  readonly taskEvent?: (task: T) => E
  /** What a failed revoke is thrown as (default an Error naming the reason, which the SDK answers
   * as an internal error); the SDK's own error classes give the client a JSON-RPC code. */
  readonly error?: (e: A2aError) => unknown
}

/** The SDK's request context and event bus, as far as they are used here. */
export interface SdkRequestContext<M> {
  readonly userMessage: M
  readonly taskId: string
  readonly contextId: string
}
export interface SdkEventBus<E> {
  publish(event: E): void
  finished(): void
}

const versioned = (version: A2aVersion, task: Task): unknown => (version === A2A_VERSION ? task : taskToV03(task))

/**
 * An SDK `AgentExecutor` running every message through the Executor: the task it publishes is
 * `handleMessage`'s under the SDK's task and context ids (tally last, state from `st`), or a
 * rejected task naming the reason when the message holds no readable call.
 */
export const writAgentExecutor = <M, T, E>(codec: SdkCodec<M, T, E>, run: RunWrit) => ({
  execute: async (context: SdkRequestContext<M>, bus: SdkEventBus<E>): Promise<void> => {
    const ids = { taskId: context.taskId, contextId: context.contextId }
    const json = codec.messageToJson(context.userMessage)
    const message = codec.version === A2A_VERSION ? decodeJson(Message, json, "message") : Effect.map(decodeJson(V03Message, json, "message"), messageFromV03)
    const task = await run(Effect.flatMap(message, (m) => handleMessage(m, ids)).pipe(
      Effect.catchTag("A2aError", (e) => Effect.succeed(rejectedTask(e.reason, ids)))
    ))
    const sdkTask = codec.taskFromJson(versioned(codec.version, task))
    // Without a taskEvent the codec's task is itself the SDK's event type (E), which the codec's
    // generic signature cannot relate to its task type.
    bus.publish(codec.taskEvent === undefined ? sdkTask as unknown as E : codec.taskEvent(sdkTask))
    bus.finished()
  },
  // Every task is final once published: there is nothing running to stop. A revoke comes through
  // `revokeThroughCancel` instead.
  cancelTask: async (): Promise<void> => {}
})

/** A request handler with the SDK's `cancelTask(params, ...)`: params with `id` and `metadata`. */
interface CancelHandler {
  cancelTask(params: { readonly id: string; readonly metadata?: unknown }, ...rest: ReadonlyArray<unknown>): Promise<unknown>
}

/** The `writ-revoke` header of the request a cancel came in, as the SDK's `ServerCallContext` keeps
 * the request's headers (`context.state.get("headers")`, its STATE_HEADERS_KEY). This is how a
 * revoke reaches the handler through the SDK's REST server, whose cancel drops the body. */
const revokeHeaderOf = (context: unknown): string | undefined => {
  const state = (context as { readonly state?: unknown } | undefined)?.state
  const headers = state instanceof Map ? state.get("headers") as Record<string, unknown> | undefined : undefined
  const h = headers?.[REVOKE_HEADER]
  return typeof h === "string" ? h : Array.isArray(h) && typeof h[0] === "string" ? h[0] : undefined
}

/**
 * `handler` with its `cancelTask` taking a revoke first: a request whose metadata carries
 * `io.writ/revoke`, or whose transport headers carry `writ-revoke` (./rest.ts), is recorded by the
 * Executor (section 9.1, `handleCancel`) and answered with the canceled task naming its ack; any
 * other cancel goes to the SDK's handler as before. Every other method is the handler's own.
 */
export const revokeThroughCancel = <H extends CancelHandler>(handler: H, codec: SdkCodec<unknown, unknown, unknown>, run: RunWrit): H => {
  const wrapped = Object.create(handler) as H
  wrapped.cancelTask = async (params, ...rest) => {
    const metadata = typeof params.metadata === "object" && params.metadata !== null ? params.metadata as Record<string, unknown> : {}
    const header = revokeHeaderOf(rest[0])
    if (metadata[REVOKE_KEY] === undefined && header === undefined) return handler.cancelTask(params, ...rest)
    const revoke: Effect.Effect<unknown, A2aError> = metadata[REVOKE_KEY] !== undefined || header === undefined
      ? Effect.succeed(metadata[REVOKE_KEY])
      : revokeOfHeader(header)
    const answer = await run(Effect.either(revoke.pipe(
      Effect.flatMap((r) => decodeJson(CancelTaskParams, { id: params.id, metadata: { ...metadata, [REVOKE_KEY]: r } }, "params")),
      Effect.flatMap((p) => handleCancel(p))
    )))
    if (Either.isLeft(answer)) {
      const e = answer.left
      throw codec.error === undefined ? new Error(`${e.reason}${e.path === undefined ? "" : ` at ${e.path}`}: ${e.message}`) : codec.error(e)
    }
    return codec.taskFromJson(versioned(codec.version, answer.right))
  }
  return wrapped
}
