// `mandate writ mcp-gate --listen` as a real process (docs/mcp-gate.md, "Serving remote clients"),
// in front of the plain fixture server: the official SDK client over Streamable HTTP lists the
// tools, a tool call without a Writ call is refused `missing_call` (the gate runs nothing
// unenforced), and the listener's refusals (401 and the resource metadata, 413) hold.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import { BEARER, httpClient, keysFile, refusals, startListening } from "../support/remote-mcp.js"
import { call, files, repo, root, statusOf } from "./support.js"

describe("mandate writ mcp-gate --listen (a process)", () => {
  it.live("lists the tools, refuses a call without a Writ call, and refuses what the listener refuses", () =>
    Effect.gen(function*() {
      const f = files([])
      const gate = yield* startListening([
        "writ", "mcp-gate", "--key", f.serverKey, "--root", root.did, "--listen", "127.0.0.1:0", "--keys", keysFile(), "--",
        process.execPath, "--import", "tsx", join(repo, "test/writ-mcp/fixtures/plain-server.ts")
      ], { PLAIN_COUNTER: join(f.dir, "counter") })
      const { client } = yield* httpClient(gate.url, BEARER)
      expect((yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)).toContain("count")
      const refused = yield* call(client, "count")
      expect(statusOf(refused)).toBe("-")
      expect(refused._tag === "result" && JSON.stringify(refused.result._meta)).toContain("missing_call")
      yield* refusals(gate.url)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
