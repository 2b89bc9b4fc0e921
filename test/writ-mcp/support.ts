// Shared by the MCP tests: keys from fixed seeds, a grant issued by the root to the agent, the
// fixture server as a child process on stdio, and the SDK's Client connected to the proxy (run in
// this process) over an in-memory transport pair. Every wait is bounded.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Clock, type Duration, Effect, Fiber, Layer, type Scope } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import type { Bound } from "../../src/writ/bound.js"
import { issueRoot } from "../../src/writ/issue.js"
import { runProxy } from "../../src/bind/writ-mcp/proxy.js"
import type { PinFile } from "../../src/bind/writ-mcp/policy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import { key, type Key } from "../bind-writ-http/support.js"

export const repo = resolve(import.meta.dirname, "../..")
export const fixture = join(repo, "test/writ-mcp/fixtures/server.ts")

export const root: Key = key(41)
export const agent: Key = key(42)
export const serverKey: Key = key(43)

/** A grant from `root` to `agent`, expiring in an hour of the clock in context. */
export const grant = (bnd: Record<string, Bound>): Effect.Effect<ReadonlyArray<Json>> =>
  Effect.gen(function*() {
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const issued = yield* issueRoot({ hld: agent.did, bnd, exp: now + 3600 })
    return issued.chain as ReadonlyArray<Json>
  }).pipe(
    Effect.provide(Layer.merge(Signer.fromSeed(root.seed), RandomBytes.seeded(new Uint8Array(32).fill(7)))),
    Effect.orDie
  )

export const anyTool: Bound = { t: "prefix", v: "mcp/tools/" }

/** The fixture server's stdio transport (not started: the proxy starts it). */
export const fixtureServer = (env: Record<string, string> = {}): StdioClientTransport =>
  new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", fixture],
    cwd: repo,
    env: { ...(process.env as Record<string, string>), WRIT_SEED: serverKey.hex, WRIT_ROOT: root.did, ...env },
    stderr: "inherit"
  })

export interface Session {
  readonly client: Client
  readonly server: StdioClientTransport
  readonly receipts: Effect.Effect<ReadonlyArray<JsonObject>>
  /** The proxy's fiber: it ends once both sides are done. */
  readonly proxy: Fiber.RuntimeFiber<void, unknown>
  /** What the client's elicitation handler answers (replace to change it). */
  elicit: () => Promise<{ action: "accept"; content: Record<string, string> }>
}

export interface SessionOptions {
  readonly grant: ReadonlyArray<Json>
  readonly env?: Record<string, string>
  readonly pins?: PinFile
  readonly closed?: boolean
  readonly keepAlive?: Duration.DurationInput
}

/** The SDK Client -> the proxy (in this process) -> the fixture server (a child). Closing the scope
 * closes the client, which shuts the proxy and the server down. */
export const session = (o: SessionOptions): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function*() {
    const kept = yield* Receipts.memory
    const [clientSide, proxySide] = InMemoryTransport.createLinkedPair()
    const server = fixtureServer(o.env)
    const proxy = yield* runProxy({
      client: proxySide,
      server,
      grant: o.grant,
      ...(o.pins === undefined ? {} : { pins: o.pins }),
      ...(o.closed === undefined ? {} : { closed: o.closed }),
      ...(o.keepAlive === undefined ? {} : { keepAlive: o.keepAlive }),
      shutdownGrace: "20 seconds"
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(9)), kept.layer)),
      Effect.forkDaemon
    )
    const client = new Client({ name: "writ-mcp-test", version: "0.1.0" }, { capabilities: { elicitation: {} } })
    const s: Session = {
      client,
      server,
      receipts: kept.read,
      proxy,
      elicit: async () => ({ action: "accept", content: { answer: "yes" } })
    }
    client.setRequestHandler(ElicitRequestSchema, () => s.elicit())
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientSide, { timeout: 60_000 })),
      () => Effect.promise(() => client.close().catch(() => undefined)).pipe(
        Effect.zipRight(Fiber.await(proxy).pipe(Effect.timeout("30 seconds"), Effect.ignore))
      )
    )
    return s
  })

export type Outcome =
  | { readonly _tag: "result"; readonly result: JsonObject }
  | { readonly _tag: "error"; readonly reason: string; readonly message: string }

/** A tool call through the client: the result, or the refusal the proxy answered with. */
export const call = (
  client: Client,
  name: string,
  args: JsonObject = {},
  options: { readonly signal?: AbortSignal; readonly onprogress?: (p: unknown) => void } = {}
): Effect.Effect<Outcome> =>
  Effect.promise(() =>
    client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000, ...options }).then(
      (result): Outcome => ({ _tag: "result", result: result as unknown as JsonObject }),
      (e: unknown): Outcome => {
        const data = e instanceof McpError && typeof e.data === "object" && e.data !== null ? (e.data as { reason?: unknown }) : {}
        return { _tag: "error", reason: typeof data.reason === "string" ? data.reason : "?", message: e instanceof Error ? e.message : String(e) }
      }
    )
  )

/** The `st` and `err.code` of a result's tally, "-" when it has none. */
export const statusOf = (o: Outcome): string => {
  if (o._tag === "error") return o.reason
  const meta = o.result._meta as JsonObject | undefined
  const t = meta?.["io.writ/tally"] as JsonObject | undefined
  if (t === undefined) return "-"
  return t.st === "ok" ? "ok" : String((t.err as JsonObject | undefined)?.code ?? t.st)
}

/** A temporary folder with the agent's and the server's key files and a grant file. */
export const files = (chain: ReadonlyArray<Json>) => {
  const dir = mkdtempSync(join(tmpdir(), "writ-mcp-"))
  const keyFile = (name: string, k: Key) => {
    const p = join(dir, name)
    writeFileSync(p, k.hex + "\n")
    chmodSync(p, 0o600)
    return p
  }
  const grantFile = join(dir, "grant.json")
  writeFileSync(grantFile, JSON.stringify(chain))
  return { dir, agentKey: keyFile("agent.key", agent), serverKey: keyFile("server.key", serverKey), grantFile }
}
