// `resources/read` bound by the grant (docs/mcp-gate.md, "Which methods a grant governs"), in front
// of @modelcontextprotocol/server-everything (server-filesystem offers no resources: its files are
// tools only, gate-filesystem.integration.test.ts). Behind `writ mcp-proxy`: a grant naming one
// resource's URI lists and reads that one, twice at most (count spent at the gate); another URI
// is refused before signing. Straight on the gate, with calls an agent signed itself: every
// refusal path (missing_call, malformed, method_refused, a signed out_of_bounds) and none reads.
import { describe, expect, it } from "@effect/vitest"
import { ReadResourceResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { callIdentity } from "../../src/writ/sign.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import { grant } from "./support.js"
import { directGate, everythingServer, gateSession, signedOp } from "./gate-support.js"

const doc = (name: string) => `demo://resource/static/document/${name}`
const A = doc("architecture.md")
const B = doc("features.md")
const readOne = (uri: string) => grant({ act: { t: "prefix", v: "mcp/resources/read" }, uri: { t: "set", v: [uri] }, uses: { t: "count", v: 2 } })
const outcome = (p: () => Promise<unknown>) =>
  Effect.map(Effect.either(Effect.tryPromise({ try: p, catch: (e) => e })), (r) => (r._tag === "Left" ? r.left : r.right))

describe("writ mcp-gate -- resources/read bound", () => {
  it.live("behind mcp-proxy: one URI listed and read, twice at most; another refused", () =>
    Effect.gen(function*() {
      const s = yield* gateSession({ grant: yield* readOne(A), upstream: everythingServer() })
      expect(s.client.getServerCapabilities()?.resources).toBeDefined()
      expect((yield* Effect.promise(() => s.client.listResources())).resources.map((r) => r.uri)).toEqual([A])
      expect((yield* Effect.promise(() => s.client.listResourceTemplates())).resourceTemplates.length).toBeGreaterThan(0)
      const read = yield* Effect.promise(() => s.client.readResource({ uri: A }))
      expect(read.contents[0].uri).toBe(A)
      expect((read._meta?.["io.writ/tally"] as JsonObject).st).toBe("ok")
      expect(String(yield* outcome(() => s.client.readResource({ uri: B })))).toContain("out_of_bounds")
      yield* Effect.promise(() => s.client.readResource({ uri: A }))
      const third = yield* outcome(() => s.client.readResource({ uri: A }))
      expect(String(third)).toContain("count_exhausted")
      expect(String(yield* outcome(() => s.client.getPrompt({ name: "simple-prompt" })))).toContain("method_refused")
      expect((yield* s.receipts).map((r) => `${String(r.tool)} ${String((r.tally as JsonObject).st)}`)).toEqual([
        `resources/read ${A} ok`, `resources/read ${A} ok`, `resources/read ${A} failed`
      ])
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("straight on the gate: each refusal path, and another URI is out_of_bounds in a signed tally", () =>
    Effect.gen(function*() {
      const chain = yield* readOne(A)
      const s = yield* directGate({ upstream: everythingServer() })
      const read = (params: JsonObject) =>
        outcome(() => s.client.request({ method: "resources/read", params: params as never }, ReadResourceResultSchema))
      const withCall = (uri: string, call: JsonObject) => ({ uri, _meta: { "io.writ/call": call } })
      // No call.
      expect(String(yield* read({ uri: A }))).toContain("missing_call")
      // A call for A sent with B's URI: malformed, B not read.
      const forA = yield* signedOp(chain, s.did, "mcp/resources/read", { uri: A })
      const swapped = yield* read(withCall(B, forA))
      expect(String(swapped)).toContain("malformed")
      // A grant whose act does not name resources/read: method_refused, as before.
      const tools = yield* grant({ act: { t: "prefix", v: "mcp/tools/" } })
      expect(String(yield* read(withCall(A, yield* signedOp(tools, s.did, "mcp/resources/read", { uri: A }))))).toContain("method_refused")
      // B under A's grant: the executor refuses it, signed.
      const forB = yield* signedOp(chain, s.did, "mcp/resources/read", { uri: B })
      const refused = (yield* read(withCall(B, forB))) as { data?: JsonObject }
      const checked = yield* verifyTallyObject(refused.data?.["io.writ/tally"] as JsonObject, s.did, "tally")
      expect(checked.value.call).toBe(callIdentity(forB))
      expect((checked.value.err as { code: string }).code).toBe("out_of_bounds")
      expect(refused.data?.reason).toBe("out_of_bounds")
      // A itself: its contents, with the tally.
      const ok = (yield* read(withCall(A, forA))) as { contents: ReadonlyArray<JsonObject>; _meta: JsonObject }
      expect(ok.contents[0].uri).toBe(A)
      expect((ok._meta["io.writ/tally"] as JsonObject).st).toBe("ok")
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
