// `mandate writ mcp-proxy -- mandate writ mcp-gate -- <plain server>` as a user runs them (child
// processes on stdio, so every line goes through the SDK's 10 MiB stdio read buffer), with the
// SDK's Client: a 6 MB result arrives whole (its body is sent once; twice would pass the buffer and
// end the session), the receipts file keeps every tally, and the gate's failures are one line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { cliEntry, runMandate } from "../support/cli.js"
import { call, files, grant, repo, root, statusOf } from "./support.js"
import { firstText } from "./gate-support.js"

describe("mandate writ mcp-proxy -- mandate writ mcp-gate -- a plain server", () => {
  it.live("a 6 MB result through both, receipts as JSON lines, and the session goes on", () =>
    Effect.gen(function*() {
      const f = files(yield* grant({ act: { t: "prefix", v: "mcp/tools/" }, uses: { t: "count", v: 5 } }))
      const receipts = join(f.dir, "receipts.jsonl")
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [
          ...cliEntry, "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts, "--",
          process.execPath, ...cliEntry, "writ", "mcp-gate", "--key", f.serverKey, "--root", root.did,
          "--store", join(f.dir, "gate.sqlite"), "--max-result-bytes", "9000000", "--",
          process.execPath, "--import", "tsx", join(repo, "test/writ-mcp/fixtures/plain-server.ts")
        ],
        cwd: repo,
        env: { ...(process.env as Record<string, string>), NO_COLOR: "1", PLAIN_COUNTER: join(f.dir, "counter") },
        stderr: "ignore"
      })
      const client = new Client({ name: "writ-mcp-gate-cli-test", version: "0.1.0" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(transport, { timeout: 120_000 })),
        () => Effect.promise(() => client.close().catch(() => undefined))
      )
      const big = yield* call(client, "big", { bytes: 6_000_000 })
      expect(statusOf(big)).toBe("ok")
      expect(big._tag === "result" && firstText(big.result).length).toBe(6_000_000)
      expect(statusOf(yield* call(client, "count"))).toBe("ok")
      const lines = readFileSync(receipts, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { tool: string; tally: { st: string } })
      expect(lines.map((l) => `${l.tool}:${l.tally.st}`)).toEqual(["big:ok", "count:ok"])
    }).pipe(Effect.scoped), { timeout: 240_000 })

  it.live("failures are one line naming the reason", () =>
    Effect.gen(function*() {
      const noKey = yield* Effect.promise(() => runMandate(["writ", "mcp-gate", "--root", root.did, "--", process.execPath, "-e", "0"], 60_000, "SIGKILL"))
      expect(noKey.status).not.toBe(0)
      expect(noKey.stderr).toContain("mandate/usage")
      const f = files([])
      const noServer = yield* Effect.promise(() => runMandate(["writ", "mcp-gate", "--key", f.serverKey, "--root", root.did], 60_000, "SIGKILL"))
      expect(noServer.stderr).toContain("mandate/usage")
      const badRoot = yield* Effect.promise(() => runMandate(["writ", "mcp-gate", "--key", f.serverKey, "--root", "nope", "--", process.execPath, "-e", "0"], 60_000, "SIGKILL"))
      expect(badRoot.stderr).toContain("mandate/bad_root")
      // --allow never opens a bound method: said at once, by both commands.
      for (const command of ["mcp-gate", "mcp-proxy"]) {
        const allowRead = yield* Effect.promise(() =>
          runMandate(["writ", command, "--allow", "resources/read", "--", process.execPath, "-e", "0"], 60_000, "SIGKILL"))
        expect(allowRead.status).not.toBe(0)
        expect(allowRead.stderr).toContain("mandate/usage")
        expect(allowRead.stderr).toContain("resources/read is bound by the grant")
      }
    }), { timeout: 240_000 })
})
