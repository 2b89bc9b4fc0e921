// The A2A endpoint's HTTP side (src/bind/writ-a2a/http.ts) on loopback, in process: the Agent
// Card, the refusals before JSON-RPC (no route, wrong method, a body over the limit), and the CLI's
// refusals (a2a-serve's inputs, a2a-send to nothing or with a file that is neither call nor revoke).
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Signer } from "../../src/kernel/services.js"
import { listenA2a } from "../../src/bind/writ-a2a/http.js"
import { resolvePeer } from "../../src/bind/writ-a2a/http-client.js"
import { A2aTasks } from "../../src/bind/writ-a2a/rpc.js"
import { AgentCard, CardExtension, MAX_MESSAGE_BYTES } from "../../src/bind/writ-a2a/index.js"
import { Executor } from "../../src/writ/executor/executor.js"
import { A, C, keyOf, seed } from "../writ/fixtures.js"
import { memoryExecutor } from "../writ-approval/executor.js"
import { runCli } from "../support/cli.js"

const withServer = <A, E>(f: (base: string) => Effect.Effect<A, E>, signer?: number) =>
  Effect.gen(function*() {
    const executor = yield* memoryExecutor(seed(C), [keyOf(A)], { perform: () => Effect.succeed({ st: "ok", res: {}, used: {} }) })
    const listening = listenA2a({ port: 0, bounds: ["amount"] }).pipe(Effect.provideService(Executor, executor), Effect.provide(A2aTasks.memory()))
    const bound = yield* (signer === undefined ? listening : Effect.provideService(listening, Signer, Signer.make(seed(signer))))
    return yield* f(bound.base)
  })

/** Serves `card` as the Agent Card of a loopback server within the scope; its base URL. */
const serveCard = (card: unknown) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Server>((resolve) => {
        const s = createServer((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card)))
        s.listen(0, "127.0.0.1", () => resolve(s))
      })
    ),
    (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
  ).pipe(Effect.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`))

const fetchJson = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const r = await fetch(url, init)
    return { status: r.status, allow: r.headers.get("allow"), body: await r.json() as Record<string, unknown> }
  })

describe("the A2A endpoint over HTTP", () => {
  it.live("signs its Agent Card with the executor's key (A2A 1.0 section 8.4); a client verifies it, refuses it changed, and reads only its signed members", () =>
    Effect.scoped(Effect.gen(function*() {
      const { base, served } = yield* withServer((base) =>
        Effect.map(fetchJson(`${base}/.well-known/agent-card.json`), (r) => ({ base, served: r.body })), C)
      expect(Array.isArray(served.signatures) && served.signatures.length).toBe(1)
      const peer = yield* Effect.provide(resolvePeer(`${base}/`, undefined, true), NodeHttpClient.layerUndici)
      expect(peer).toEqual({ url: `${base}/a2a`, version: "1.0", transport: "jsonrpc", signedBy: keyOf(C) })
      // The same card with an endpoint of another host: refused, nothing in it is used.
      const interfaces = served.supportedInterfaces as Array<Record<string, unknown>>
      const moved = yield* serveCard({ ...served, supportedInterfaces: [{ ...interfaces[0], url: "http://127.0.0.1:9/a2a" }, ...interfaces.slice(1)] })
      const refused = yield* Effect.either(Effect.provide(resolvePeer(moved), NodeHttpClient.layerUndici))
      expect(Either.isLeft(refused) && refused.left.reason).toBe("mandate/a2a_card_signature")
      // The unsigned 0.3 url changed is outside the signature: the card still verifies, and the
      // client takes the signed interface, never that url.
      const only03 = yield* serveCard({ ...served, url: "http://127.0.0.1:9/a2a" })
      expect((yield* Effect.provide(resolvePeer(only03), NodeHttpClient.layerUndici)).url).toBe(`${base}/a2a`)
      // An unsigned card is read, unless a signed one is required.
      const unsigned = yield* serveCard({ ...served, signatures: undefined })
      expect((yield* Effect.provide(resolvePeer(unsigned), NodeHttpClient.layerUndici)).signedBy).toBeUndefined()
      const required = yield* Effect.either(Effect.provide(resolvePeer(unsigned, undefined, true), NodeHttpClient.layerUndici))
      expect(Either.isLeft(required) && required.left.reason).toBe("mandate/a2a_card_signature")
    })))

  it.live("never signs its card with a key other than the executor's", () =>
    Effect.scoped(withServer((base) =>
      Effect.map(fetchJson(`${base}/.well-known/agent-card.json`), (r) => expect(r.body.signatures).toBeUndefined()), A)))

  it.live("publishes its Agent Card (1.0, with a 0.3 card's members and the Writ extension) and refuses what it does not serve", () =>
    Effect.scoped(withServer((base) =>
      Effect.gen(function*() {
        const card = yield* fetchJson(`${base}/.well-known/agent-card.json`)
        expect(card.status).toBe(200)
        const read = Schema.decodeUnknownSync(AgentCard)(card.body)
        expect(read.supportedInterfaces?.map((i) => `${i.protocolBinding} ${i.protocolVersion}`)).toEqual(["JSONRPC 1.0", "HTTP+JSON 1.0", "JSONRPC 0.3"])
        expect(read.url).toBe(`${base}/a2a`)
        expect(read.protocolVersion).toBe("0.3.0")
        const ext = Schema.decodeUnknownSync(CardExtension)((card.body.capabilities as { extensions: Array<unknown> }).extensions[0])
        expect(ext.params).toEqual({ did: keyOf(C), bounds: ["amount"], maxChain: 8 })
        const peer = yield* Effect.provide(resolvePeer(`${base}/`), NodeHttpClient.layerUndici)
        expect(peer).toEqual({ url: `${base}/a2a`, version: "1.0", transport: "jsonrpc" })

        expect(yield* fetchJson(`${base}/a2a`)).toMatchObject({ status: 405, allow: "POST", body: { error: "mandate/method_not_allowed" } })
        expect(yield* fetchJson(`${base}/.well-known/agent-card.json`, { method: "POST", body: "{}" })).toMatchObject({ status: 405, allow: "GET" })
        expect(yield* fetchJson(`${base}/elsewhere`)).toMatchObject({ status: 404, body: { error: "mandate/not_found" } })
        // The HTTP+JSON binding under the same path, its body bounded as JSON-RPC's is.
        const bigRest = yield* fetchJson(`${base}/a2a/message:send`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(MAX_MESSAGE_BYTES + 1) })
        expect(bigRest.status).toBe(413)
        expect((bigRest.body.error as { details: Array<{ reason: string }> }).details[0].reason).toBe("too_large")
        const big = yield* fetchJson(`${base}/a2a`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(MAX_MESSAGE_BYTES + 1) })
        expect(big.status).toBe(200)
        expect((big.body.error as { data: Array<{ reason: string }> }).data[0].reason).toBe("too_large")
        // A client finds no card where there is none.
        const missing = yield* Effect.either(Effect.provide(resolvePeer(`${base}/elsewhere/card.json`), NodeHttpClient.layerUndici))
        expect(Either.isLeft(missing) && missing.left.reason).toBe("mandate/unreachable")
      }))))
})

describe("mandate writ a2a-serve and a2a-send refusals", () => {
  const dir = mkdtempSync(join(tmpdir(), "mandate-a2a-cli-"))
  it("a2a-serve refuses a key file that is not one, a root that is not a did:key, a bad path, TLS flags alone, a bad bindings file; a2a-send a file that is neither call nor revoke, and an agent that is not there", async () => {
    writeFileSync(join(dir, "bad.key"), "nope", { mode: 0o600 })
    writeFileSync(join(dir, "handler.mjs"), "export default { perform: () => null }")
    const bad = await runCli(["writ", "a2a-serve", "--key", join(dir, "bad.key"), "--root", keyOf(A), "--handler", join(dir, "handler.mjs"), "--port", "0"])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/^error: mandate\/bad_key_file at .*bad\.key/)
    const key = (await runCli(["keygen", join(dir, "c.key")]))
    expect(key.status).toBe(0)
    const root = await runCli(["writ", "a2a-serve", "--key", join(dir, "c.key"), "--root", "did:key:nope", "--handler", join(dir, "handler.mjs"), "--port", "0"])
    expect(root.stderr).toMatch(/^error: mandate\/bad_root/)
    const serve = (...more: Array<string>) => runCli(["writ", "a2a-serve", "--key", join(dir, "c.key"), "--root", keyOf(A), "--handler", join(dir, "handler.mjs"), "--port", "0", ...more])
    expect((await serve("--path", "a2a")).stderr).toMatch(/^error: mandate\/usage at mandate writ a2a-serve: --path starts with \//)
    writeFileSync(join(dir, "x.pem"), "not a certificate")
    expect((await serve("--tls-cert", join(dir, "x.pem"))).stderr).toMatch(/^error: mandate\/bad_tls at mandate writ a2a-serve: --tls-cert and --tls-key go together/)
    expect((await serve("--client-ca", join(dir, "x.pem"))).stderr).toMatch(/^error: mandate\/bad_tls/)
    writeFileSync(join(dir, "bindings.json"), "[]")
    expect((await serve("--bindings", join(dir, "bindings.json"))).stderr).toMatch(/^error: mandate\/bad_bindings/)
    writeFileSync(join(dir, "other.json"), JSON.stringify({ typ: "tally" }))
    const wrong = await runCli(["writ", "a2a-send", "http://127.0.0.1:9/", join(dir, "other.json")])
    expect(wrong.stderr).toMatch(/^error: wrong_type at .*other\.json/)
    writeFileSync(join(dir, "call.json"), JSON.stringify({ typ: "call" }))
    const nothing = await runCli(["writ", "a2a-send", "http://127.0.0.1:9/", join(dir, "call.json")])
    expect(nothing.status).toBe(1)
    expect(nothing.stderr).toMatch(/^error: mandate\/unreachable at http:\/\/127\.0\.0\.1:9\/\.well-known\/agent-card\.json/)
  }, 60_000)
})
