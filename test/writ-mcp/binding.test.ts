// The MCP binding itself (docs/adoption.md 2a, docs/bindings.md Server and Client), in process:
// the SDK's Server with the binding's tools/call over an executor on the memory stores, and the
// SDK's Client over an in-memory transport, signing calls itself. Every refusal path of the server
// side, and every client check against forged results made offline.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { ErrorCode, type McpError } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { echoTool, mcpExecutor } from "../../src/app/writ-mcp.js"
import { check, params, ready, verified } from "../../src/bind/writ-mcp/client.js"
import { advertisementOf, ERROR_META, TALLY_META, toolOp } from "../../src/bind/writ-mcp/present.js"
import { capabilities, serveTools, toolSet } from "../../src/bind/writ-mcp/server.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import type { Bound } from "../../src/writ/bound.js"
import { delegate, holdChain, issueRoot, makeCall } from "../../src/writ/issue.js"
import { verifyChain } from "../../src/writ/chain.js"
import { agent, anyTool, root, serverKey } from "./support.js"

const agentLayer = Layer.merge(Signer.fromSeed(agent.seed), RandomBytes.seeded(new Uint8Array(32).fill(3)))

/** A root grant to the agent, passed on to the server's key (as the proxy does). */
const chainTo = (bnd: Record<string, Bound>, to = serverKey.did) =>
  Effect.gen(function*() {
    const g = yield* issueRoot({ hld: agent.did, bnd, exp: 3600 }).pipe(
      Effect.provide(Layer.merge(Signer.fromSeed(root.seed), RandomBytes.seeded(new Uint8Array(32).fill(4))))
    )
    const held = yield* holdChain(g.chain).pipe(Effect.provide(agentLayer))
    return (yield* delegate(held, { hld: to }).pipe(Effect.provide(agentLayer))).chain as ReadonlyArray<Json>
  }).pipe(Effect.orDie)

// Each call its own idempotency key (a repeated one is a replay, answered with the first tally).
let calls = 0
const signCall = (chain: ReadonlyArray<Json>, op: string, args: JsonObject) =>
  Effect.map(Effect.orDie(makeCall({ chain, op, args, id: encodeBase64url(new Uint8Array(16).fill(++calls)) }).pipe(Effect.provide(agentLayer))), (c) => c.call.json)

/** The binding's server on an in-memory pair, and a connected SDK Client. */
const connected = (require: boolean) =>
  Effect.gen(function*() {
    const tools = toolSet([echoTool])
    const executor = yield* Effect.orDie(mcpExecutor({ seed: serverKey.seed, roots: [root.did], tools }))
    const server = new Server({ name: "t", version: "0" }, { capabilities: capabilities(executor.did) })
    yield* serveTools(server, { executor, tools, require })
    const [a, b] = InMemoryTransport.createLinkedPair()
    yield* Effect.promise(() => server.connect(b))
    const client = new Client({ name: "t", version: "0" })
    yield* Effect.acquireRelease(Effect.promise(() => client.connect(a)), () => Effect.promise(() => client.close()))
    const callTool = (p: JsonObject) => Effect.promise(() => client.callTool(p as never) as Promise<unknown>)
    return { client, callTool, did: executor.did }
  })

const metaOf = (r: unknown): JsonObject => ((r as JsonObject)._meta ?? {}) as JsonObject

describe("MCP binding: server side", () => {
  it.scoped("advertises io.writ/delegation with its key, runs a call the executor accepts, and its result verifies", () =>
    Effect.gen(function*() {
      const s = yield* connected(true)
      expect(advertisementOf(s.client.getServerCapabilities())).toEqual({ v: 1, did: serverKey.did })
      const chain = yield* chainTo({ act: anyTool, uses: { t: "count", v: 1 } })
      const c1 = yield* signCall(chain, toolOp("echo"), { text: "hi" })
      const r1 = yield* s.callTool(params("echo", c1))
      expect((r1 as JsonObject).structuredContent).toEqual({ text: "hi" })
      const v = yield* verified(c1, r1)
      expect(v.result).toEqual(r1)
      // A count of 1: the second is a signed refusal, which verifies as evidence.
      const c2 = yield* signCall(chain, toolOp("echo"), { text: "again" })
      const r2 = yield* s.callTool(params("echo", c2))
      const v2 = yield* check(c2, r2)
      expect([v2.tally.value.st, v2.tally.value.err?.code]).toEqual(["failed", "count_exhausted"])
      expect((r2 as JsonObject).isError).toBe(true)
    }))

  it.scoped("refuses missing_call with require, and runs unenforced (no tally) without it", () =>
    Effect.gen(function*() {
      const strict = yield* connected(true)
      const r = yield* strict.callTool({ name: "echo", arguments: { text: "hi" } })
      expect(metaOf(r)[ERROR_META]).toBe("missing_call")
      expect((r as JsonObject).isError).toBe(true)
      const loose = yield* connected(false)
      const u = yield* loose.callTool({ name: "echo", arguments: { text: "hi" } })
      expect((u as JsonObject).structuredContent).toEqual({ text: "hi" })
      expect(metaOf(u)[TALLY_META]).toBeUndefined()
      // A tool the server does not list is a JSON-RPC invalid-params error, whatever it carries.
      const unknown = yield* Effect.flip(Effect.tryPromise({ try: () => strict.client.callTool({ name: "nonesuch", arguments: {} }), catch: (e) => e as McpError }))
      expect([unknown.code, unknown.message]).toEqual([ErrorCode.InvalidParams, expect.stringContaining("unknown tool: nonesuch")])
    }))

  it.scoped("refuses as malformed arguments that differ from the signed args, and a call for another tool", () =>
    Effect.gen(function*() {
      const s = yield* connected(true)
      const chain = yield* chainTo({ act: anyTool, uses: { t: "count", v: 5 } })
      const c = yield* signCall(chain, toolOp("echo"), { text: "ten" })
      const differ = yield* s.callTool({ ...params("echo", c), arguments: { text: "ten thousand" } })
      expect(metaOf(differ)[ERROR_META]).toBe("malformed")
      const other = yield* signCall(chain, toolOp("transfer"), { text: "ten" })
      const wrongTool = yield* s.callTool({ ...params("echo", other), name: "echo" })
      expect(metaOf(wrongTool)[ERROR_META]).toBe("malformed")
      expect(metaOf(yield* s.callTool({ name: "echo", arguments: {}, _meta: { "io.writ/call": "nope" } }))[ERROR_META]).toBe("malformed")
      // A refusal with no tally is, to a client, missing_tally: nothing counts as done.
      const e = yield* Effect.flip(check(c, differ))
      expect(e.reason).toBe("missing_tally")
      // None of those consumed a use: the signed call still runs.
      expect(((yield* s.callTool(params("echo", c))) as JsonObject).structuredContent).toEqual({ text: "ten" })
    }))

  it.scoped("a failing tool: isError true, st failed, no body, and the result verifies", () =>
    Effect.gen(function*() {
      const s = yield* connected(true)
      const chain = yield* chainTo({ act: anyTool })
      const c = yield* signCall(chain, toolOp("echo"), { text: 5 })
      const r = yield* s.callTool(params("echo", c))
      const v = yield* check(c, r)
      expect([v.tally.value.st, v.tally.value.err?.code, v.body]).toEqual(["failed", "mandate/bad_arguments", undefined])
    }))
})

describe("MCP binding: client side", () => {
  it.effect("ready: unenforced_server only for a chain with max or count bounds", () =>
    Effect.gen(function*() {
      const counted = yield* verifyChain(yield* chainTo({ act: anyTool, uses: { t: "count", v: 1 } }))
      const maxed = yield* verifyChain(yield* chainTo({ act: anyTool, amount: { t: "max", v: 10 } }))
      const plain = yield* verifyChain(yield* chainTo({ act: anyTool }))
      expect((yield* Effect.flip(ready(counted, false))).reason).toBe("unenforced_server")
      expect((yield* Effect.flip(ready(maxed, false))).reason).toBe("unenforced_server")
      expect(Exit.isSuccess(yield* Effect.exit(ready(plain, false)))).toBe(true)
      expect(Exit.isSuccess(yield* Effect.exit(ready(counted, true)))).toBe(true)
    }))

  it.scoped("check refuses every result that contradicts its tally", () =>
    Effect.gen(function*() {
      const s = yield* connected(true)
      const chain = yield* chainTo({ act: anyTool, uses: { t: "count", v: 3 } })
      const c = yield* signCall(chain, toolOp("echo"), { text: "hi" })
      const good = (yield* s.callTool(params("echo", c))) as JsonObject
      const refusedCall = yield* signCall(yield* chainTo({ act: anyTool, uses: { t: "count", v: 0 } }), toolOp("echo"), { text: "x" })
      const refusal = (yield* s.callTool(params("echo", refusedCall))) as JsonObject
      const { structuredContent: _b, ...noBody } = good
      const cases: ReadonlyArray<readonly [string, Json, unknown, string]> = [
        ["tally stripped", c, { ...good, _meta: {} }, "missing_tally"],
        ["body deleted", c, noBody, "result_mismatch"],
        ["body null", c, { ...good, structuredContent: null }, "result_mismatch"],
        ["body changed", c, { ...good, structuredContent: { text: "other" } }, "result_mismatch"],
        ["isError flipped", c, { ...good, isError: true }, "result_mismatch"],
        ["refusal shown as success", refusedCall, { ...refusal, isError: false }, "result_mismatch"],
        ["refusal isError missing", refusedCall, (({ isError: _e, ...r }) => r)(refusal), "result_mismatch"],
        ["a body under a refusal", refusedCall, { ...refusal, structuredContent: { text: "x" } }, "result_mismatch"],
        ["the tally of another call", refusedCall, good, "tally_mismatch"]
      ]
      for (const [name, call, result, reason] of cases) {
        const e = yield* Effect.flip(check(call, result))
        expect([name, e.reason]).toEqual([name, reason])
      }
      // A tally signed by someone other than the leaf holder.
      const forged = { ...good, _meta: { [TALLY_META]: { ...(metaOf(good)[TALLY_META] as JsonObject), sig: (metaOf(refusal)[TALLY_META] as JsonObject).sig } } }
      expect((yield* Effect.flip(check(c, forged))).reason).toBe("bad_signature")
      // Content is never authenticated: rewritten content still checks, and is replaced.
      const rewritten = { ...good, content: [{ type: "text", text: "Done: the transfer went through." }] }
      expect((yield* verified(c, rewritten)).result).toEqual(good)
    }))
})
