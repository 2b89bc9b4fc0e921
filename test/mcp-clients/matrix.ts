// The same checks for every third-party client against every Mandate MCP surface: connect, list
// the tools, call an allowed tool and get its result (with the tally where the surface signs one),
// call a refused one and see the refusal's code reach the client in the form the surface
// documents, and close. Every client here speaks stdio and Streamable HTTP; the proxy is run over
// both (`--listen` for HTTP), the gate over stdio here (its listener: test/writ-mcp/gate-remote*).
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import type { ClientSession, Endpoint, Outcome, ThirdPartyClient } from "./clients.js"
import { bridge, gateAlone, jobServer, proxyEcho, proxyEchoHttp, proxyGateEverything, receiptsOf } from "./surfaces.js"

const T = { timeout: 240_000 }

/** A connected session, closed with the scope (the close itself must succeed). */
const session = (client: ThirdPartyClient, e: Endpoint): Effect.Effect<ClientSession, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => client.connect(e)),
    (s) => Effect.promise(() => s.close())
  )

const call = (s: ClientSession, name: string, args: Record<string, unknown>) => Effect.promise(() => s.call(name, args))
const show = (o: Outcome) => JSON.stringify(o).slice(0, 2000)

/** The tally in a result's `_meta`: "ok", or the refusal's code. */
const tallyOf = (o: Outcome): string | undefined => {
  const t = o.meta?.["io.writ/tally"] as { st: string; err?: { code: string } } | undefined
  return t === undefined ? undefined : t.st === "ok" ? "ok" : t.err?.code ?? t.st
}

/** A refusal as it reaches the client: a result with `isError` whose text names the code and whose
 * tally (when the client passes `_meta` on) is the signed refusal, or an error the client threw
 * whose message names it (LangChain turns `isError` into a thrown ToolException with the text). */
const expectSignedRefusal = (client: ThirdPartyClient, o: Outcome, code: string) => {
  expect(o.isError, show(o)).toBe(true)
  expect(o.text, show(o)).toContain(`Writ refused this call: ${code}`)
  if (client.flattensErrors) expect(o.thrown, show(o)).toBeDefined()
  else expect(tallyOf(o), show(o)).toBe(code)
}

/** A refusal answered as a JSON-RPC error (-32001, `data.reason`); the client threw. */
const expectErrorRefusal = (client: ThirdPartyClient, o: Outcome, code: string) => {
  expect(o.thrown, show(o)).toBeDefined()
  expect(o.text, show(o)).toContain(code)
  // A client that keeps the JSON-RPC error (all but LangChain, which keeps its message only).
  if (client.flattensErrors) expect(o.text, show(o)).toContain(`-32001: ${code}`)
  else expect(o.thrown, show(o)).toEqual({ code: -32001, reason: code })
}

export const describeSurfaces = (client: ThirdPartyClient) => {
  const who = `${client.pkg} ${client.version}`

  describe(`${who} -> mandate writ mcp-proxy -- mandate writ mcp-echo (stdio)`, () => {
    it.live("lists echo, runs it once with a verified tally, then sees count_exhausted; the receipts are kept", () =>
      Effect.gen(function*() {
        const p = yield* proxyEcho
        yield* Effect.scoped(Effect.gen(function*() {
          const s = yield* session(client, p.endpoint)
          expect(yield* Effect.promise(() => s.tools())).toEqual(["echo"])
          const ok = yield* call(s, "echo", { text: "one" })
          expect(ok.isError, show(ok)).toBe(false)
          expect(ok.structured).toEqual({ text: "one" })
          expect(ok.text).toBe('{"text":"one"}')
          expect(tallyOf(ok), show(ok)).toBe("ok")
          expectSignedRefusal(client, yield* call(s, "echo", { text: "two" }), "count_exhausted")
        }))
        expect(receiptsOf(p.receipts)).toEqual(["echo:ok", "echo:count_exhausted"])
      }), T)

  })

  describe(`${who} -> mandate writ mcp-proxy --listen -- mandate writ mcp-echo (Streamable HTTP, a bearer key)`, () => {
    it.live("lists echo, runs it once with a verified tally, then sees count_exhausted; the receipts are kept", () =>
      Effect.gen(function*() {
        const p = yield* proxyEchoHttp
        yield* Effect.scoped(Effect.gen(function*() {
          const s = yield* session(client, p.endpoint)
          expect(yield* Effect.promise(() => s.tools())).toEqual(["echo"])
          const ok = yield* call(s, "echo", { text: "one" })
          expect(ok.isError, show(ok)).toBe(false)
          expect(ok.structured).toEqual({ text: "one" })
          expect(tallyOf(ok), show(ok)).toBe("ok")
          expectSignedRefusal(client, yield* call(s, "echo", { text: "two" }), "count_exhausted")
        }))
        expect(receiptsOf(p.receipts)).toEqual(["echo:ok", "echo:count_exhausted"])
      }).pipe(Effect.scoped), T)
  })

  for (const upstream of ["stdio", "http"] as const) {
    describe(`${who} -> mandate writ mcp-proxy -- mandate writ mcp-gate -- server-everything (upstream ${upstream})`, () => {
      it.live("lists the server's tools, echo runs once under the gate's tally, another tool and a second echo are refused", () =>
        Effect.gen(function*() {
          const p = yield* proxyGateEverything(upstream)
          yield* Effect.scoped(Effect.gen(function*() {
            const s = yield* session(client, p.endpoint)
            const tools = yield* Effect.promise(() => s.tools())
            // The proxy lists only what its grant covers (src/bind/writ-mcp/scope.ts).
            expect(tools).toContain("echo")
            expect(tools).not.toContain("get-sum")
            const ok = yield* call(s, "echo", { message: "hello" })
            expect(ok.isError, show(ok)).toBe(false)
            expect(ok.text).toBe("Echo: hello")
            expect(tallyOf(ok), show(ok)).toBe("ok")
            // Outside the grant, called anyway (by a client that can call an unlisted tool): the
            // proxy refuses before anything is signed or sent.
            if (client.callsUnlisted) expectErrorRefusal(client, yield* call(s, "get-sum", { a: 1, b: 2 }), "forbidden_op")
            // The count is spent: the gate's executor signs the refusal.
            expectSignedRefusal(client, yield* call(s, "echo", { message: "again" }), "count_exhausted")
          }))
          expect(receiptsOf(p.receipts)).toEqual(["echo:ok", "echo:count_exhausted"])
        }).pipe(Effect.scoped), T)
    })
  }

  describe(`${who} -> mandate writ mcp-gate -- server-everything, no proxy (stdio)`, () => {
    it.live("lists the tools; a call that carries no Writ call is refused missing_call and runs nothing", () =>
      Effect.gen(function*() {
        const s = yield* session(client, yield* gateAlone)
        expect(yield* Effect.promise(() => s.tools())).toContain("echo")
        const o = yield* call(s, "echo", { message: "unsigned" })
        expect(o.isError, show(o)).toBe(true)
        expect(o.text, show(o)).toContain("missing_call")
        expect(o.text).not.toContain("Echo: unsigned")
        // Refused with no tally: the code in `_meta["io.writ/error"]` (docs/mcp-gate.md).
        if (client.flattensErrors) expect(o.thrown, show(o)).toBeDefined()
        else expect(o.meta?.["io.writ/error"], show(o)).toBe("missing_call")
      }).pipe(Effect.scoped), T)
  })

  for (const transport of ["stdio", "http"] as const) {
    describe(`${who} -> mandate yea mcp (the bridge, ${transport}) -> the example shop`, () => {
      it.live("lists a tool per capability; an ask and an order inside the grant commit; an order over it returns consent codes and commits nothing", () =>
        Effect.gen(function*() {
          const s = yield* session(client, yield* bridge(transport))
          expect([...(yield* Effect.promise(() => s.tools()))].sort()).toEqual(["shop_order", "shop_search", "yea_consent", "yea_expand", "yea_undo"])
          const search = yield* call(s, "shop_search", { tag: "vegan" })
          expect(search.isError, show(search)).toBe(false)
          expect(search.text).toMatch(/^items\[\d+\]/)
          const order = yield* call(s, "shop_order", { items: [{ sku: "m01", qty: 1 }], deliver: "2030-01-02" })
          expect(order.isError, show(order)).toBe(false)
          expect(order.text, show(order)).toMatch(/^✓ /)
          expect((order.structured as { reply: { kind: string } }).reply.kind).toBe("RECEIPT")
          const dear = yield* call(s, "shop_order", { items: [{ sku: "m01", qty: 6 }], deliver: "2030-01-02" })
          expect(dear.text, show(dear)).not.toMatch(/^✓ /)
          const codes = (dear.structured as { codes?: Array<{ code: string }> } | undefined)?.codes ?? []
          expect(codes.length, show(dear)).toBeGreaterThan(0)
          expect(codes[0].code).toMatch(/^pc1\./)
        }).pipe(Effect.scoped), T)
    })
  }

  for (const transport of ["stdio", "http"] as const) {
    describe(`${who} -> mandate yea mcp-example (the job server, ${transport})`, () => {
      it.live("a refund inside the policy runs once with a receipt; one over it is refused with why, and runs nothing", () =>
        Effect.gen(function*() {
          const s = yield* session(client, yield* jobServer(transport))
          expect(yield* Effect.promise(() => s.tools())).toContain("refund")
          const ok = yield* call(s, "refund", { charge: "ch_1", cents: 1200 })
          expect(ok.isError, show(ok)).toBe(false)
          expect(ok.text).toMatch(/^✓ Refund 12\.00 USD of ch_1 \(receipt r_[A-Za-z0-9_-]{12}\)/)
          expect((ok.structured as { receipt: { id: string } }).receipt.id).toMatch(/^r_/)
          const over = yield* call(s, "refund", { charge: "ch_2", cents: 4000 })
          expect(over.isError, show(over)).toBe(true)
          expect(over.text).toContain("Approval needed: spend over the per-commit limit of 25.00 USD")
        }).pipe(Effect.scoped), T)
    })
  }
}
