// The approval context of an MCP server (SPEC-mcp-ts `yea(options)`), created once per process:
// the server's id, the pinned principal, where the policy comes from, the store and the
// request-state codec live here, while a server factory may build a fresh `McpServer` per session
// and register its jobs on it each time. SDK callbacks are Promise-based; each runs its Effect
// through a FiberSet runtime owned by the scope it is made in, so the store, codec, randomness and
// Clock all come from Layers and no fiber outlives the server.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberSet, Schema } from "effect"
import { RandomBytes } from "../../kernel/services.js"
import { isKey } from "../../yea/keys.js"
import { ApprovalStore, RequestStateCodec, type Tightening } from "../../yea/approval/index.js"
import { effectiveTightening } from "./policy-file.js"

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** Why `yea()` refuses to serve (SPEC-mcp-ts "Start-up refusals"). */
export class StartupRefused extends Schema.TaggedError<StartupRefused>()("StartupRefused", {
  reason: Schema.Literal("invalid_name", "no_sub", "memory_store_http", "invalid_service_id"),
  message: Schema.String
}) {}

export interface YeaMcpOptions {
  /** `[a-z0-9._-]{1,64}`: names the server in consent codes and the start-up line. */
  readonly name: string
  readonly transport: "stdio" | "http"
  /** This server's public key (`ed25519:`): the service id and the holder of policy and consents. */
  readonly serviceId: string
  /** The pinned principal key. Without it nothing runs on its own and no consent is accepted. */
  readonly principal?: string | undefined
  /** The signed policy (`pg1.`), read on every call so a new grant applies without a restart. */
  readonly policy?: Effect.Effect<string | null>
  /** The parsed `~/.yea/policy.json` (undefined when there is none), read on every call. */
  readonly policyFile?: Effect.Effect<unknown>
  /** Tightening from the server's own options, merged with the file's. */
  readonly tighten?: Tightening
  /** Who is calling. stdio: '' (one user per process). HTTP: required. */
  readonly sub?: (extra: Extra) => string
  /** HTTP only: a promise that one process serves every request (required on a memory store). */
  readonly singleProcess?: boolean
}

export type ApprovalServices = ApprovalStore | RequestStateCodec | RandomBytes

export interface ApprovalContext {
  readonly options: YeaMcpOptions
  readonly run: <A, E>(effect: Effect.Effect<A, E, ApprovalServices>) => Promise<A>
  readonly storeKind: "memory" | "sqlite" | "file"
  /** The caller of this request ('' refuses on HTTP). */
  readonly sub: (extra: Extra) => string
  /** The tightening in force now, or why every job call is refused (an unreadable `policy.json`). */
  readonly tightening: Effect.Effect<{ readonly ok: true; readonly value: Tightening } | { readonly ok: false; readonly why: string }>
  readonly policy: Effect.Effect<string | null>
}

const NAME = /^[a-z0-9._-]{1,64}$/

/** Creates the approval context, or refuses to start (nothing is served then). */
export const makeApprovals = Effect.fn("yea.mcp.approvals")(function* (options: YeaMcpOptions) {
  if (!NAME.test(options.name)) return yield* Effect.fail(new StartupRefused({ reason: "invalid_name", message: `server name ${JSON.stringify(options.name)} is not [a-z0-9._-]{1,64}` }))
  if (!isKey(options.serviceId)) return yield* Effect.fail(new StartupRefused({ reason: "invalid_service_id", message: "the service id is not an ed25519: key" }))
  if (options.transport === "http" && options.sub === undefined) {
    return yield* Effect.fail(new StartupRefused({ reason: "no_sub", message: "an HTTP server needs a sub function: who is calling" }))
  }
  const store = yield* ApprovalStore
  if (options.transport === "http" && store.kind === "memory" && options.singleProcess !== true) {
    return yield* Effect.fail(new StartupRefused({ reason: "memory_store_http", message: "HTTP on a memory store needs singleProcess: true (or a shared store)" }))
  }
  // SDK callbacks run their Effects as fibers of a FiberSet owned by the caller's scope, so
  // closing it (the server stopping) interrupts every call still in flight.
  const runPromise = yield* FiberSet.makeRuntimePromise<ApprovalServices>()
  const run = <A, E>(effect: Effect.Effect<A, E, ApprovalServices>) => runPromise(effect) as Promise<A>
  // A `deny` that can't be known refuses every job (SPEC-mcp-ts `tighten`).
  const tightening = Effect.map(options.policyFile ?? Effect.succeed(undefined), (file) => effectiveTightening(options.tighten, file))
  const sub = options.sub ?? (() => "")
  return { options, run, storeKind: store.kind, sub, tightening, policy: options.policy ?? Effect.succeed(null) } satisfies ApprovalContext
})
