// Where a result's body travels (present.ts BODY_META; docs/mcp-gate.md "Results"), checked on
// tallies an executor signed: a large body is sent once (the text block says where it is, and the
// result still verifies and rebuilds to itself); a relayed result keeps its content blocks (form
// "result") and any change to them, or a form the tally was not made for, is `result_mismatch`.
// Also the method policy's rules (methods.ts).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mcpExecutor } from "../../src/app/writ-mcp.js"
import { check, verified } from "../../src/bind/writ-mcp/client.js"
import { allowsBound, checkMethod, offeredCapabilities, ruleOf } from "../../src/bind/writ-mcp/methods.js"
import { BODY_META, largeBodyText, present, TEXT_COPY_MAX } from "../../src/bind/writ-mcp/present.js"
import { toolSet } from "../../src/bind/writ-mcp/server.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { delegate, holdChain, issueRoot, makeCall } from "../../src/writ/issue.js"
import { agent, root, serverKey } from "./support.js"

const agentLayer = Layer.merge(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(3)))
const relayed: JsonObject = {
  content: [
    { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    { type: "resource_link", uri: "file:///a.txt", name: "a.txt" }
  ]
}

/** A tally and body for one call of `tool`, signed by an executor on the memory stores. */
const answered = (tool: "large" | "relayed") =>
  Effect.gen(function*() {
    const tools = toolSet([
      { definition: { name: "large", inputSchema: { type: "object" } }, run: () => Effect.succeed({ st: "ok" as const, res: { text: "z".repeat(TEXT_COPY_MAX + 10) } }) },
      { definition: { name: "relayed", inputSchema: { type: "object" } }, run: () => Effect.succeed({ st: "ok" as const, res: relayed }) }
    ])
    const executor = yield* Effect.orDie(mcpExecutor({ seed: serverKey.seed, roots: [root.did], tools }))
    const g = yield* issueRoot({ hld: agent.did, bnd: { act: { t: "prefix", v: "mcp/tools/" } }, exp: 3600 }).pipe(
      Effect.provide(Layer.merge(Signer.fromSeed(root.seed), RandomBytes.seeded(new Uint8Array(32).fill(4))))
    )
    const held = yield* holdChain(g.chain).pipe(Effect.provide(agentLayer))
    const chain = (yield* delegate(held, { hld: executor.did }).pipe(Effect.provide(agentLayer))).chain as ReadonlyArray<Json>
    const call = (yield* makeCall({ chain, op: `mcp/tools/${tool}`, args: {}, id: encodeBase64url(new Uint8Array(16).fill(9)) }).pipe(Effect.provide(agentLayer))).call.json
    const answer = yield* executor.call(call)
    if (answer._tag !== "tally") return yield* Effect.die(answer.reason)
    return { call, tally: answer.tally, body: Option.getOrThrow(answer.res) as JsonObject }
  }).pipe(Effect.orDie)

describe("MCP binding: body forms", () => {
  it.scoped("a body over TEXT_COPY_MAX is sent once; the result verifies and rebuilds to itself", () =>
    Effect.gen(function*() {
      const a = yield* answered("large")
      const result = present(a.tally, a.body)
      const content = result.content as ReadonlyArray<JsonObject>
      expect(content).toEqual([{ type: "text", text: largeBodyText(TEXT_COPY_MAX + 10 + '{"text":""}'.length) }])
      expect(JSON.stringify(result).length).toBeLessThan(TEXT_COPY_MAX + 2000)
      const v = yield* verified(a.call, result)
      expect(v.result).toEqual(result)
    }))

  it.scoped("a relayed result keeps its content blocks; changed blocks or a wrong form are result_mismatch", () =>
    Effect.gen(function*() {
      const a = yield* answered("relayed")
      const result = present(a.tally, a.body, "result")
      expect(result.content).toEqual(relayed.content)
      expect(result.structuredContent).toBeUndefined()
      const v = yield* verified(a.call, result)
      expect(v.result).toEqual(result)
      const fail = (r: JsonObject) => Effect.flip(check(a.call, r))
      const changed = { ...result, content: [{ type: "text", text: "not the picture" }] }
      expect((yield* fail(changed)).reason).toBe("result_mismatch")
      // The same body as structuredContent, without the marker: not what was signed either way.
      const structured = present(a.tally, a.body)
      expect((yield* verified(a.call, structured)).result).toEqual(structured)
      const marked = { ...structured, _meta: { ...(structured._meta as JsonObject), [BODY_META]: "result" } }
      expect((yield* fail(marked)).reason).toBe("result_mismatch")
      const unknown = { ...result, _meta: { ...(result._meta as JsonObject), [BODY_META]: "other" } }
      expect((yield* fail(unknown)).reason).toBe("result_mismatch")
    }))
})

describe("method policy", () => {
  it("tools/call, resources/read and prompts/get are bound, listings relayed, the session open, the rest refused unless allowed", () => {
    expect(["tools/call", "resources/read", "prompts/get"].map((m) => ruleOf(m, []))).toEqual(["bound", "bound", "bound"])
    expect(["resources/list", "resources/templates/list", "prompts/list"].map((m) => ruleOf(m, []))).toEqual(["listing", "listing", "listing"])
    expect(["initialize", "ping", "tools/list"].map((m) => ruleOf(m, []))).toEqual(["open", "open", "open"])
    for (const m of ["resources/subscribe", "completion/complete", "logging/setLevel", "tasks/get"]) expect(ruleOf(m, [])).toBe("refused")
    // --allow never opens a bound method; the CLI says so (allowsBound).
    expect(ruleOf("resources/read", ["resources/read", "resources/*"])).toBe("bound")
    expect(allowsBound(["resources/read", "logging/setLevel", "prompts/*"])).toEqual(["resources/read"])
    expect(ruleOf("resources/subscribe", ["resources/*"])).toBe("allowed")
    expect(ruleOf("logging/setLevel", ["completion/*"])).toBe("refused")
    // A family is offered when a bound or allowed method of it is named; subscribe only when allowed and named.
    const caps = { tools: {}, resources: { subscribe: true, listChanged: true }, prompts: {}, logging: {}, completions: {} }
    expect(offeredCapabilities(caps, [], (m) => m === "prompts/get")).toEqual({ tools: {}, prompts: {} })
    expect(offeredCapabilities(caps, ["logging/setLevel"], () => true)).toEqual({ tools: {}, resources: { listChanged: true }, prompts: {}, logging: {} })
    expect(offeredCapabilities(caps, ["resources/subscribe"], (m) => m === "resources/subscribe")).toEqual({ tools: {}, resources: { subscribe: true, listChanged: true } })
    expect(offeredCapabilities(caps, ["resources/subscribe"], () => false)).toEqual({ tools: {} })
  })

  it.effect("a refused method names method_refused", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(checkMethod("logging/setLevel", []))
      expect(e.reason).toBe("method_refused")
      expect(e.message).toContain("logging/setLevel")
    }))
})
