// Shared by the mcp-gate tests: the SDK Client -> mcp-proxy (in this process, signing under the
// grant) -> mcp-gate (in this process, enforcing it and signing tallies) -> a plain MCP server (a
// child on stdio, or Streamable HTTP). Every wait is bounded; closing the scope closes all of it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, Fiber, Layer, type Scope } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startMcpGate, type McpGateOptions } from "../../src/app/writ-mcp-gate.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { runProxy, type ProxyOptions } from "../../src/bind/writ-mcp/proxy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { delegate, holdChain } from "../../src/writ/issue.js"
import { signObject } from "../../src/writ/sign.js"
import { agent, repo, root, serverKey } from "./support.js"

export const tempDir = (): string => mkdtempSync(join(tmpdir(), "writ-mcp-gate-"))

const inherit = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === "string"))

/** A node script from node_modules (or a .ts fixture through tsx) as a stdio transport. */
export const stdioServer = (script: ReadonlyArray<string>, env: Record<string, string> = {}): StdioClientTransport =>
  new StdioClientTransport({ command: process.execPath, args: [...script], cwd: repo, env: { ...inherit(), ...env }, stderr: "ignore" })

export const filesystemServer = (dir: string) =>
  stdioServer([join(repo, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), dir])
export const everythingScript = join(repo, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
export const everythingServer = () => stdioServer([everythingScript, "stdio"])
export const plainServer = (env: Record<string, string> = {}) =>
  stdioServer(["--import", "tsx", join(repo, "test/writ-mcp/fixtures/plain-server.ts")], env)

export interface GateSession {
  readonly client: Client
  readonly receipts: Effect.Effect<ReadonlyArray<JsonObject>>
  readonly did: string
}

export interface GateSessionOptions {
  readonly grant: ReadonlyArray<Json>
  readonly upstream: Transport
  readonly gate?: Partial<Omit<McpGateOptions, "seed" | "roots" | "client" | "upstream">>
  readonly proxy?: Partial<Pick<ProxyOptions, "allow" | "maxResultBytes" | "maxQueuedNotifications" | "pins">>
  /** The client's capabilities (default: roots, sampling and elicitation, as a real client). */
  readonly capabilities?: Record<string, unknown>
}

/** The whole chain; the gate is started (and connected to its server) before the client connects. */
export const gateSession = (o: GateSessionOptions): Effect.Effect<GateSession, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const [proxyToGate, gateSide] = InMemoryTransport.createLinkedPair()
    const gate = yield* startMcpGate({ seed: serverKey.seed, roots: [root.did], client: gateSide, upstream: o.upstream, connectTimeout: 60_000, ...o.gate })
    const kept = yield* Receipts.memory
    const [clientSide, proxySide] = InMemoryTransport.createLinkedPair()
    const proxy = yield* runProxy({ client: proxySide, server: proxyToGate, grant: o.grant, shutdownGrace: "20 seconds", ...o.proxy }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.live, kept.layer)),
      Effect.forkDaemon
    )
    const client = new Client({ name: "writ-mcp-gate-test", version: "0.1.0" }, {
      capabilities: (o.capabilities ?? { roots: { listChanged: true }, sampling: {}, elicitation: {} }) as never
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientSide, { timeout: 60_000 })),
      () => Effect.promise(() => client.close().catch(() => undefined)).pipe(
        Effect.zipRight(Fiber.await(proxy).pipe(Effect.timeout("30 seconds"), Effect.ignore))
      )
    )
    return { client, receipts: kept.read, did: gate.did }
  })

/** The text of a result's first content block. */
export const firstText = (result: JsonObject): string => {
  const c = (result.content as ReadonlyArray<JsonObject>)[0]
  return typeof c?.text === "string" ? c.text : ""
}

/** The SDK Client straight on the gate (no proxy): the tests sign calls themselves, as an agent
 * that does not check its own bounds would. */
export const directGate = (o: Omit<GateSessionOptions, "grant" | "proxy">): Effect.Effect<GateSession & { readonly upstreamDid: string }, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const [clientSide, gateSide] = InMemoryTransport.createLinkedPair()
    const gate = yield* startMcpGate({ seed: serverKey.seed, roots: [root.did], client: gateSide, upstream: o.upstream, connectTimeout: 60_000, ...o.gate })
    const client = new Client({ name: "writ-mcp-gate-direct", version: "0.1.0" }, { capabilities: (o.capabilities ?? {}) as never })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientSide, { timeout: 60_000 })),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    return { client, receipts: Effect.succeed([]), did: gate.did, upstreamDid: gate.did }
  })

/** A call signed by the agent under `grant` passed on to `executor`, with no check of its own
 * bounds (issue.ts `makeCall` would refuse it first), for the operation `op`. */
export const signedOp = (grant: ReadonlyArray<Json>, executor: string, op: string, args: JsonObject, id?: string) =>
  Effect.gen(function*() {
    const held = yield* holdChain(grant)
    const child = yield* delegate(held, { hld: executor })
    return (yield* signObject({
      v: 1 as const, typ: "call" as const, id: id ?? encodeBase64url(yield* Effect.flatMap(RandomBytes, (r) => r.bytes(16))),
      chain: child.chain as never, from: agent.did, op, args
    })) as unknown as JsonObject
  }).pipe(Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.live)), Effect.orDie)

/** `signedOp` for a tool, as its `tools/call` params. */
export const signedCall = (grant: ReadonlyArray<Json>, executor: string, tool: string, args: JsonObject, id?: string) =>
  Effect.map(signedOp(grant, executor, `mcp/tools/${tool}`, args, id), (call) => ({ name: tool, arguments: args, _meta: { "io.writ/call": call } }))
