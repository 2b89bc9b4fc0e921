// `writ mcp-gate` in front of @modelcontextprotocol/server-filesystem (a child on stdio). Behind
// `writ mcp-proxy` with the SDK's Client: a grant to read one file reads it, twice at most, the
// count being the gate's (`count_exhausted`, signed). Straight on the gate, with calls an agent
// signed without checking its own bounds: reading another file is refused by the gate's executor
// with section 11's `out_of_bounds` in a signed tally that verifies (client.ts `check`), and the
// server never reads it; and no `resources/*` request reaches a file (`method_refused`,
// docs/mcp-gate.md "Which methods a grant governs").
import { describe, expect, it } from "@effect/vitest"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { check } from "../../src/bind/writ-mcp/client.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { callIdentity } from "../../src/writ/sign.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import { call, grant, statusOf } from "./support.js"
import { directGate, filesystemServer, firstText, gateSession, signedCall, tempDir } from "./gate-support.js"

const setup = () => {
  const dir = tempDir()
  const a = join(dir, "a.txt")
  const b = join(dir, "b.txt")
  writeFileSync(a, "alpha")
  writeFileSync(b, "beta")
  return { dir, a, b }
}
const readOne = (path: string) => grant({ act: { t: "prefix", v: "mcp/tools/read_text_file" }, path: { t: "set", v: [path] }, uses: { t: "count", v: 2 } })
const codeOf = (r: JsonObject) => (r.tally as { err?: { code: string }; st: string }).err?.code ?? (r.tally as { st: string }).st

describe("writ mcp-gate -- server-filesystem", () => {
  it.live("behind mcp-proxy: one file, twice at most; the count and the receipts are the gate's", () =>
    Effect.gen(function*() {
      const f = setup()
      const s = yield* gateSession({ grant: yield* readOne(f.a), upstream: filesystemServer(f.dir) })
      expect((yield* Effect.promise(() => s.client.listTools())).tools.map((t) => t.name)).toContain("read_text_file")
      const first = yield* call(s.client, "read_text_file", { path: f.a })
      expect(statusOf(first)).toBe("ok")
      expect(first._tag === "result" && firstText(first.result)).toBe("alpha")
      // The proxy itself refuses what the grant does not allow, before signing.
      expect(statusOf(yield* call(s.client, "read_text_file", { path: f.b }))).toBe("out_of_bounds")
      expect(statusOf(yield* call(s.client, "list_directory", { path: f.dir }))).toBe("forbidden_op")
      expect(statusOf(yield* call(s.client, "read_text_file", { path: f.a }))).toBe("ok")
      expect(statusOf(yield* call(s.client, "read_text_file", { path: f.a }))).toBe("count_exhausted")
      const read = yield* Effect.either(Effect.tryPromise({ try: () => s.client.readResource({ uri: `file://${f.b}` }), catch: (e) => e }))
      expect(read._tag === "Left" && String(read.left)).toContain("method_refused")
      expect((yield* s.receipts).map(codeOf)).toEqual(["ok", "ok", "count_exhausted"])
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("straight on the gate: another file is out_of_bounds in a signed tally, and never read", () =>
    Effect.gen(function*() {
      const f = setup()
      const chain = yield* readOne(f.a)
      const s = yield* directGate({ upstream: filesystemServer(f.dir) })
      const send = (params: JsonObject) => Effect.promise(() => s.client.request({ method: "tools/call", params: params as never }, CallToolResultSchema))
      const other = yield* signedCall(chain, s.did, "read_text_file", { path: f.b })
      const refused = yield* send(other)
      // The refusal is signed by the gate's key (section 6.1; client.ts checks a refusal so too).
      const checked = yield* verifyTallyObject(refused._meta?.["io.writ/tally"] as JsonObject, s.did, "tally")
      expect(checked.value.call).toBe(callIdentity(other._meta["io.writ/call"]))
      expect(checked.value.st).toBe("failed")
      expect((checked.value.err as { code: string }).code).toBe("out_of_bounds")
      expect(JSON.stringify(refused)).not.toContain("beta")
      // The file the grant names: ok, its content blocks as the server sent them.
      const mine = yield* signedCall(chain, s.did, "read_text_file", { path: f.a })
      const ok = yield* send(mine)
      expect((yield* check(mine._meta["io.writ/call"], ok)).tally.value.st).toBe("ok")
      expect(ok.content).toEqual([{ type: "text", text: "alpha" }])
      // No call: refused unsigned, nothing run.
      const bare = yield* send({ name: "read_text_file", arguments: { path: f.b } })
      expect(bare._meta?.["io.writ/error"]).toBe("missing_call")
      expect(JSON.stringify(bare)).not.toContain("beta")
      // Arguments other than the signed ones: malformed.
      const swapped = yield* send({ ...mine, arguments: { path: f.b } })
      expect(swapped._meta?.["io.writ/error"]).toBe("malformed")
      // Resources: refused, not relayed.
      const read = yield* Effect.either(Effect.tryPromise({ try: () => s.client.request({ method: "resources/read", params: { uri: `file://${f.b}` } }, CallToolResultSchema), catch: (e) => e }))
      expect(read._tag === "Left" && String(read.left)).toContain("method_refused")
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
