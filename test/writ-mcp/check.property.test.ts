// A property of the client check (docs/bindings.md, "What a verified result authenticates"): for
// any body a tool returns, the result the server renders verifies and rebuilds to itself, and every
// other body, and the flipped `isError`, is refused `result_mismatch`. Bodies are drawn with a
// fixed seed; the tallies are real, signed by an executor on the memory stores.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { mcpExecutor } from "../../src/app/writ-mcp.js"
import { check, verified } from "../../src/bind/writ-mcp/client.js"
import { toolOp } from "../../src/bind/writ-mcp/present.js"
import { callTool, toolSet } from "../../src/bind/writ-mcp/server.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { delegate, holdChain, issueRoot, makeCall } from "../../src/writ/issue.js"
import { agent, anyTool, root, serverKey } from "./support.js"

const json: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 8 }),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("v"), { maxKeys: 3 })
  )
})).v
const body = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 4 }) as fc.Arbitrary<JsonObject>
const bodies = fc.sample(fc.tuple(body, body), { seed: 20261202, numRuns: 40 })

const agentLayer = Layer.merge(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(11)))

describe("MCP binding: the client check, over drawn bodies", () => {
  it.scoped("a rendered result verifies and rebuilds to itself; another body or a flipped isError is result_mismatch", () =>
    Effect.gen(function*() {
      // `mirror` returns its arguments as its body.
      const tools = toolSet([{
        definition: { name: "mirror", inputSchema: { type: "object" } },
        run: (args) => Effect.succeed({ st: "ok" as const, res: args })
      }])
      const executor = yield* Effect.orDie(mcpExecutor({ seed: serverKey.seed, roots: [root.did], tools }))
      const g = yield* issueRoot({ hld: agent.did, bnd: { act: anyTool }, exp: 3600 }).pipe(
        Effect.provide(Layer.merge(Signer.fromSeed(root.seed), RandomBytes.seeded(new Uint8Array(32).fill(12))))
      )
      const held = yield* holdChain(g.chain).pipe(Effect.provide(agentLayer))
      const chain = (yield* delegate(held, { hld: serverKey.did }).pipe(Effect.provide(agentLayer))).chain
      let n = 0
      for (const [b, other] of bodies) {
        const id = encodeBase64url(new Uint8Array(16).fill(++n))
        const call = (yield* makeCall({ chain, op: toolOp("mirror"), args: b, id }).pipe(Effect.provide(agentLayer))).call.json
        const result = yield* callTool({ executor, tools, require: true }, { name: "mirror", arguments: b, _meta: { "io.writ/call": call } }, undefined)
        expect(result.structuredContent).toEqual(b)
        expect((yield* verified(call, result)).result).toEqual(result)
        if (encodeCanonical(other, "utf16") !== encodeCanonical(b, "utf16")) {
          expect((yield* Effect.flip(check(call, { ...result, structuredContent: other }))).reason).toBe("result_mismatch")
        }
        expect((yield* Effect.flip(check(call, { ...result, isError: true }))).reason).toBe("result_mismatch")
      }
      expect(n).toBe(40)
    }).pipe(Effect.orDie), { timeout: 120_000 })
})
