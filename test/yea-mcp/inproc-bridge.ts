// The bridge (`makeBridge`) in process, in front of YEA services run in process (the frames go
// through JSON as on a wire), joined to the SDK's Client by its InMemoryTransport: for the
// bridge's own logic (deny, policy file, tool modes) without child processes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import { stateLayer } from "../../src/app/yea-serve.js"
import { makeBridge, type BridgeOptions } from "../../src/bind/mcp/bridge.js"
import { describeService } from "../../src/bind/mcp/bridge-service.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import type { ServiceSpec } from "../../src/yea/service/define.js"
import { makeService, type YeaServiceRuntime } from "../../src/yea/service/runtime.js"

export const principalSeed = new Uint8Array(32).fill(1)
export const agentSeed = new Uint8Array(32).fill(2)
export const principalKey = keyFromSeed(principalSeed)
export const agentKey = keyFromSeed(agentSeed)

const agentLayer = Layer.merge(Signer.fromSeed(agentSeed), RandomBytes.live)

/** A grant from the test principal to the test agent with these caveats. */
export const grantOf = (caveats: ReadonlyArray<Record<string, unknown>>) =>
  issueRootGrant({ sub: agentKey, caveats: [...caveats, { exp: 4102444800 }] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.live)))

/** A service runtime (in memory) for a spec. */
export const runtimeOf = (spec: Effect.Effect<ServiceSpec>) => Effect.flatMap(spec, (s) => makeService(s)).pipe(Effect.provide(stateLayer()))

/** Services behind a bridge with `options`, and an MCP client on it; closed with the scope. */
export const bridgeOver = (specs: ReadonlyArray<Effect.Effect<ServiceSpec> | YeaServiceRuntime>, grants: ReadonlyArray<string>, options: Omit<BridgeOptions, "agent" | "grants"> = {}) =>
  Effect.gen(function* () {
    const services = yield* Effect.forEach(specs, (spec) =>
      Effect.gen(function* () {
        const runtime = Effect.isEffect(spec) ? yield* runtimeOf(spec) : spec
        const client = yield* makeClient(connectInProcess(runtime), { grants, agentName: "test-bridge" })
        return yield* describeService(client)
      })
    )
    const built = yield* makeBridge(services.map((s) => s.service), { agent: agentKey, grants, ...options })
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const [a, b] = InMemoryTransport.createLinkedPair()
        const c = new Client({ name: "t", version: "1" })
        await Promise.all([built.server.connect(a), c.connect(b)])
        return c
      }),
      (c) => Effect.promise(() => c.close())
    )
    const call = (name: string, args: Record<string, unknown>) => Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)
    return { client, call, built }
  }).pipe(Effect.provide(agentLayer))

export const text = (r: CallToolResult): string => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
