// `writ mcp-gate --http URL`: a server over Streamable HTTP that drops is reconnected
// (src/bind/writ-mcp-gate/restart.ts). A real HTTP server (the SDK's server transport on node:http)
// behind the gate, stopped while a call is in flight and started again on the same port: the call
// in flight is answered `unknown_outcome` in a signed tally and never sent again; a call while the
// server is down is `unreachable_server`; once it is back, the next call reconnects and runs.
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { directGate, signedCall } from "./gate-support.js"
import { sessionHttpServer } from "./http-upstream.js"
import { anyTool, grant } from "./support.js"

/** The plain server over HTTP: `noop` answers, `hang` never does (it tells `hung` it started). */
const upstreamHttp = (counts: { hang: number; noop: number }, hung: () => void) =>
  sessionHttpServer(async (transport) => {
    const mcp = new McpServer({ name: "plain-http", version: "1" })
    mcp.registerTool("noop", { description: "answers" }, () => {
      counts.noop++
      return { content: [{ type: "text", text: "done" }] }
    })
    mcp.registerTool("hang", { description: "never answers" }, () => {
      counts.hang++
      hung()
      return new Promise<never>(() => undefined)
    })
    await mcp.connect(transport)
  })

const tallyCode = (result: JsonObject): string => {
  const t = (result._meta as JsonObject | undefined)?.["io.writ/tally"] as JsonObject | undefined
  return t === undefined ? "-" : t.st === "ok" ? "ok" : String((t.err as JsonObject | undefined)?.code ?? t.st)
}

describe("mcp-gate --http: an upstream that drops", () => {
  it.live("the call in flight is unknown_outcome, never re-sent; down: unreachable_server; back: reconnected", () =>
    Effect.gen(function*() {
      const counts = { hang: 0, noop: 0 }
      const started = yield* Deferred.make<void>()
      const up = upstreamHttp(counts, () => Deferred.unsafeDone(started, Effect.void))
      const port = yield* Effect.promise(() => up.listen(0))
      yield* Effect.addFinalizer(() => Effect.promise(() => up.stop()))
      const url = new URL(`http://127.0.0.1:${port}/mcp`)
      const chain = yield* grant({ act: anyTool })
      const s = yield* directGate({
        upstream: new StreamableHTTPClientTransport(url),
        gate: { restart: () => new StreamableHTTPClientTransport(url), reconnectOnError: true, connectTimeout: 5_000 }
      })
      const callTool = (tool: string) =>
        Effect.flatMap(signedCall(chain, s.did, tool, {}), (params) =>
          Effect.promise(() => s.client.callTool(params, undefined, { timeout: 60_000 }).then((r) => r as unknown as JsonObject)))
      expect(tallyCode(yield* callTool("noop"))).toBe("ok")
      // A call in flight when the server stops.
      const inFlight = yield* Effect.fork(callTool("hang"))
      yield* Deferred.await(started)
      yield* Effect.promise(() => up.stop())
      const answered = yield* inFlight.await.pipe(Effect.flatten)
      expect(tallyCode(answered)).toBe("unknown_outcome")
      // Down: the next call cannot reconnect, and says so (unsigned: nothing was sent).
      const down = yield* callTool("noop")
      expect(JSON.stringify(down._meta)).toContain("unreachable_server")
      // Back on the same port: the next call reconnects (after the backoff) and runs.
      yield* Effect.promise(() => up.listen(port))
      expect(tallyCode(yield* callTool("noop"))).toBe("ok")
      expect(counts).toEqual({ hang: 1, noop: 2 })
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
