// `mandate writ mcp-proxy --listen` (docs/mcp-gate.md, "Serving remote clients") as a user runs
// it: a real process in front of the Writ fixture server (a child per session), and the official
// SDK client over Streamable HTTP: it lists the tools and calls one (the result verified, the
// receipt kept); two sessions at once; no key or a wrong one is refused (401,
// with the protected resource metadata discoverable); a body over the cap is 413; off loopback
// without --keys the command refuses to start.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { runMandate } from "../support/cli.js"
import { BEARER, httpClient, keysFile, refusals, startListening } from "../support/remote-mcp.js"
import { anyTool, call, files, fixture, grant, root, serverKey, statusOf } from "./support.js"

const T = { timeout: 180_000 }

const proxyArgs = (f: ReturnType<typeof files>, receipts: string, listen: ReadonlyArray<string>) => [
  "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts, ...listen, "--",
  process.execPath, "--import", "tsx", fixture
]

const fixtureEnv = { WRIT_SEED: serverKey.hex, WRIT_ROOT: root.did }

describe("mandate writ mcp-proxy --listen", () => {
  it.live("the SDK client over HTTP lists and calls a tool under the grant; two sessions; refusals", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool, uses: { t: "count", v: 5 } }))
      const receipts = join(f.dir, "receipts.jsonl")
      const proxy = yield* startListening(proxyArgs(f, receipts, ["--listen", "127.0.0.1:0", "--keys", keysFile()]), fixtureEnv)
      const one = yield* httpClient(proxy.url, BEARER, { elicitation: {} })
      const tools = yield* Effect.promise(() => one.client.listTools())
      expect(tools.tools.map((t) => t.name)).toContain("echo")
      const echoed = yield* call(one.client, "echo", { text: "over the network" })
      expect(statusOf(echoed)).toBe("ok")
      expect(echoed._tag === "result" && echoed.result.structuredContent).toEqual({ text: "over the network" })
      // A second session (with its own server behind it), and the first goes on.
      const two = yield* httpClient(proxy.url, BEARER)
      expect(two.transport.sessionId).not.toBe(one.transport.sessionId)
      expect(statusOf(yield* call(two.client, "aborted"))).toBe("ok")
      expect(statusOf(yield* call(one.client, "echo", { text: "again" }))).toBe("ok")
      // Progress reaches the client on the stream of its call, before the result.
      const seen: Array<unknown> = []
      expect(statusOf(yield* call(one.client, "progress", {}, { onprogress: (p) => void seen.push(p) }))).toBe("ok")
      expect(seen).toHaveLength(2)
      const kept = readFileSync(receipts, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { tool: string }).tool)
      expect(kept).toEqual(["echo", "aborted", "echo", "progress"])
      yield* refusals(proxy.url)
      // The listener still serves after the refusals.
      expect(statusOf(yield* call(one.client, "echo", { text: "still" }))).toBe("ok")
    }).pipe(Effect.scoped), T)

  it.live("off loopback without --keys it refuses to start (mandate/usage); --keys without --listen is a usage error", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: anyTool }))
      const open = yield* Effect.promise(() => runMandate(proxyArgs(f, join(f.dir, "r"), ["--listen", "0.0.0.0:0"]), 60_000, "SIGKILL"))
      expect(open.status).not.toBe(0)
      expect(open.stderr).toMatch(/^error: mandate\/usage at --listen: refusing to listen on 0\.0\.0\.0 without authentication/m)
      const stray = yield* Effect.promise(() => runMandate(proxyArgs(f, join(f.dir, "r"), ["--keys", keysFile()]), 60_000, "SIGKILL"))
      expect(stray.status).not.toBe(0)
      expect(stray.stderr).toContain("--keys goes with --listen")
    }), T)
})
