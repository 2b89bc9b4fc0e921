// `writ mcp-gate`'s executor guarantees, straight on the gate with calls the tests sign, in front of
// a plain fixture server (fixtures/plain-server.ts) whose `count` tool counts its runs in a file:
// exactly once across a restart on the SQLite store (section 9: the same call is answered with the
// same tally and the tool does not run again); `unknown_outcome` for a call that may have run (the
// server exited on receiving it, or did not answer in time), after which nothing is sent to a
// server that is gone (`unreachable_server`); and the gate's pins and closed-world arguments.
import { describe, expect, it } from "@effect/vitest"
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { pinsOf } from "../../src/bind/writ-mcp/policy.js"
import { listAllTools, rawPeer } from "../../src/bind/writ-mcp/rpc.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { grant } from "./support.js"
import { directGate, plainServer, signedCall, tempDir } from "./gate-support.js"

const anyTool = () => grant({ act: { t: "prefix", v: "mcp/tools/" }, uses: { t: "count", v: 10 } })
const send = (client: Client, params: JsonObject) =>
  Effect.promise(() => client.request({ method: "tools/call", params: params as never }, CallToolResultSchema, { timeout: 60_000 }))
const tallyOf = (r: CallToolResult) => r._meta?.["io.writ/tally"] as JsonObject | undefined
const codeOf = (r: CallToolResult) => {
  const t = tallyOf(r)
  if (t === undefined) return `unsigned:${String(r._meta?.["io.writ/error"])}`
  return t.st === "ok" ? "ok" : String((t.err as JsonObject).code)
}

describe("writ mcp-gate: exactly once, unknown_outcome, pins, closed", () => {
  it.live("the same call after a restart on --store: the same tally, and the tool does not run again", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const counter = join(dir, "counter")
      const gate = { storeFile: join(dir, "gate.sqlite") }
      const chain = yield* anyTool()
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const s = yield* directGate({ upstream: plainServer({ PLAIN_COUNTER: counter }), gate })
        const c = yield* signedCall(chain, s.did, "count", {})
        const once = yield* send(s.client, c)
        expect(codeOf(once)).toBe("ok")
        expect(once.structuredContent).toEqual({ n: 1 })
        const again = yield* send(s.client, c)
        expect(tallyOf(again)).toEqual(tallyOf(once))
        return { c, tally: tallyOf(once) }
      }))
      expect(readFileSync(counter, "utf8")).toBe("1")
      yield* Effect.scoped(Effect.gen(function*() {
        const s = yield* directGate({ upstream: plainServer({ PLAIN_COUNTER: counter }), gate })
        const replayed = yield* send(s.client, first.c)
        expect(tallyOf(replayed)).toEqual(first.tally)
        expect(readFileSync(counter, "utf8")).toBe("1")
        // A new call runs.
        const next = yield* send(s.client, yield* signedCall(chain, s.did, "count", {}))
        expect(next.structuredContent).toEqual({ n: 2 })
      }))
    }), { timeout: 180_000 })

  it.live("a server that exits on the call: unknown_outcome, signed; then unreachable_server, unsigned", () =>
    Effect.gen(function*() {
      const chain = yield* anyTool()
      const s = yield* directGate({ upstream: plainServer() })
      const died = yield* send(s.client, yield* signedCall(chain, s.did, "die", {}))
      expect(codeOf(died)).toBe("unknown_outcome")
      expect(died.isError).toBe(true)
      const after = yield* send(s.client, yield* signedCall(chain, s.did, "count", {}))
      expect(codeOf(after)).toBe("unsigned:unreachable_server")
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("a server that exits on the call and can be restarted: unknown_outcome, then the next call runs on a new server", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const env = { PLAIN_COUNTER: join(dir, "counter") }
      const chain = yield* anyTool()
      const s = yield* directGate({ upstream: plainServer(env), gate: { restart: () => plainServer(env) } })
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "count", {})))).toBe("ok")
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "die", {})))).toBe("unknown_outcome")
      const after = yield* send(s.client, yield* signedCall(chain, s.did, "count", {}))
      expect(codeOf(after)).toBe("ok")
      // The counter file is the tool's own state: the restarted server counted on from it.
      expect(after.structuredContent).toEqual({ n: 2 })
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "die", {})))).toBe("unknown_outcome")
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "count", {})))).toBe("ok")
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("a tool that does not answer in time: unknown_outcome, and the session goes on", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const chain = yield* anyTool()
      const s = yield* directGate({ upstream: plainServer({ PLAIN_COUNTER: join(dir, "counter") }), gate: { timeout: "1 second" } })
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "hang", {})))).toBe("unknown_outcome")
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "count", {})))).toBe("ok")
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("pins and closed-world arguments: refused unsigned before the executor, nothing run or counted", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const counter = join(dir, "counter")
      const listing = yield* Effect.scoped(Effect.flatMap(rawPeer(plainServer()), (p) => listAllTools(p.request)))
      const { count: _count, ...pins } = pinsOf(listing)
      const chain = yield* grant({ act: { t: "prefix", v: "mcp/tools/" }, bytes: { t: "max", v: 100 }, uses: { t: "count", v: 1 } })
      const s = yield* directGate({ upstream: plainServer({ PLAIN_COUNTER: counter }), gate: { pins, closed: true } })
      const listed = (yield* Effect.promise(() => s.client.listTools())).tools.map((t) => t.name).sort()
      expect(listed).toEqual(["big", "die", "hang", "picture"])
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "count", {})))).toBe("unsigned:unpinned_tool")
      expect(existsSync(counter)).toBe(false)
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "big", { bytes: 5, extra: 1 })))).toBe("unsigned:unbound_argument")
      // The one use is still there.
      const big = yield* send(s.client, yield* signedCall(chain, s.did, "big", { bytes: 5 }))
      expect(codeOf(big)).toBe("ok")
      expect(big.content).toEqual([{ type: "text", text: "xxxxx" }])
      expect(codeOf(yield* send(s.client, yield* signedCall(chain, s.did, "big", { bytes: 5 })))).toBe("count_exhausted")
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
