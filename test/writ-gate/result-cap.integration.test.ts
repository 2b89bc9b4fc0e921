// `writ gate` reads the API's response body up to its bound (src/bind/writ-gate/upstream.ts): an
// API on loopback that answers a call with a body streamed far past the bound gets its connection
// dropped soon after the bound; the call is a recorded outcome, `failed` with
// `gate/result_too_large` in a signed tally, answered again from the store on a retry without the
// API seeing it twice; and the next call through the gate is served whole.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startGate } from "../../src/app/writ-gate.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyCall } from "../../src/writ/call.js"
import { issueRoot, makeCall } from "../../src/writ/issue.js"
import { verifyTally } from "../../src/writ/tally.js"
import { FLOOD_TOTAL, type FloodCount, replyFlood } from "../support/reply-flood.js"
import { as, keyOf, run, seed } from "../writ/fixtures.js"

const A = 41 // the root, which signs the calls
const G = 42 // the gate
const EXP = 1_800_000_000
const NOW = EXP - 3600
const TOTAL = FLOOD_TOTAL
const BOUND = 64 * 1024

/** The API: `POST /v1/export` streams TOTAL bytes (chunked, with backpressure) counting what it wrote; `POST /v1/ping` answers small. */
const floodApi = Effect.acquireRelease(
  Effect.async<{ url: string; server: Http.Server; flood: FloodCount & { requests: number }; pings: { n: number } }>((resume) => {
    const { count, pump: stream } = replyFlood()
    const flood = Object.assign(count, { requests: 0 })
    const pings = { n: 0 }
    const pump = (res: Http.ServerResponse) => stream(res.writeHead(200, { "content-type": "application/json" }))
    const server = Http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        if (req.url === "/v1/export") {
          flood.requests++
          return void pump(res)
        }
        pings.n++
        res.writeHead(200, { "content-type": "application/json" }).end(`{"pong":true}`)
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, flood, pings })))
  }),
  ({ server }) => Effect.async<void>((resume) => { server.closeAllConnections(); server.close(() => resume(Effect.void)) })
)

const root = run(as(A)(issueRoot({ hld: keyOf(G), exp: EXP, bnd: { act: { t: "prefix", v: "data" }, uses: { t: "count", v: 10 } } })))
const chain = root.chain as unknown as ReadonlyArray<JsonObject>
const callFor = (op: string, n: number) => run(as(A, n)(makeCall({ chain, op, args: { n } }))).call.json
const header = (call: JsonObject) => Buffer.from(JSON.stringify(call)).toString("base64url")

describe("writ gate's bound on an API response body", () => {
  it.scoped("stops reading a body streamed past the bound, records gate/result_too_large, and serves the next call", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW * 1000)
      const api = yield* floodApi
      const dir = mkdtempSync(join(tmpdir(), "mandate-gate-cap-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      writeFileSync(join(dir, "gate.json"), JSON.stringify({
        upstream: api.url,
        routes: {
          export: { method: "POST", path: "/v1/export", act: "data/export", bind: { n: "$.n" } },
          ping: { method: "POST", path: "/v1/ping", act: "data/ping", bind: { n: "$.n" } }
        }
      }))
      writeFileSync(join(dir, "gate.key"), Buffer.from(seed(G)).toString("hex") + "\n", { mode: 0o600 })
      const gate = yield* startGate({ mappingFile: join(dir, "gate.json"), seedFile: join(dir, "gate.key"), roots: [keyOf(A)], port: 0, maxResponseBytes: BOUND }).pipe(
        Effect.provide(NodeContext.layer)
      )
      const post = (path: string, call: JsonObject, n: number) =>
        Effect.promise(async () => {
          const r = await fetch(`${gate.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "writ-call": header(call) }, body: JSON.stringify({ n }) })
          return { status: r.status, headers: r.headers, text: await r.text() }
        })

      const big = callFor("data/export", 1)
      const r = yield* post("/v1/export", big, 1)
      yield* Effect.promise(() => api.flood.done)
      // The gate dropped the connection: the API wrote what the socket buffers took past the bound, far below the body.
      expect(api.flood.written).toBeLessThan(TOTAL / 4)
      expect(r.status).toBe(200)
      const tally = (JSON.parse(r.text) as { tally: JsonObject }).tally
      const k = yield* verifyCall(big)
      const t = yield* verifyTally(tally, { callId: k.call.id, op: "data/export", chain: k.chain }, { value: { status: 200, max_bytes: BOUND } })
      expect(t.value.st).toBe("failed")
      expect(t.value.err).toEqual({ code: "gate/result_too_large" })

      // A retry of the same call is answered from the store: the API is not asked again.
      const again = yield* post("/v1/export", big, 1)
      expect((JSON.parse(again.text) as { tally: { err: unknown } }).tally.err).toEqual({ code: "gate/result_too_large" })
      expect(api.flood.requests).toBe(1)

      // The next call through the gate is served as before.
      const ping = yield* post("/v1/ping", callFor("data/ping", 2), 2)
      expect(ping.status).toBe(200)
      expect(JSON.parse(ping.text)).toEqual({ pong: true })
      expect(ping.headers.get("writ-tally")).not.toBeNull()
      expect(api.pings.n).toBe(1)
    }))
})
