// The A2A endpoint's HTTP side (src/bind/writ-a2a/http.ts) on loopback, in process: the Agent
// Card, the refusals before JSON-RPC (no route, wrong method, a body over the limit), and the CLI's
// refusals (a2a-serve's inputs, a2a-send to nothing or with a file that is neither call nor revoke).
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { listenA2a } from "../../src/bind/writ-a2a/http.js"
import { resolvePeer } from "../../src/bind/writ-a2a/http-client.js"
import { A2aTasks } from "../../src/bind/writ-a2a/rpc.js"
import { AgentCard, CardExtension, MAX_MESSAGE_BYTES } from "../../src/bind/writ-a2a/index.js"
import { Executor } from "../../src/writ/executor/executor.js"
import { A, C, keyOf, seed } from "../writ/fixtures.js"
import { memoryExecutor } from "../writ-approval/executor.js"
import { runCli } from "../support/cli.js"

const withServer = <A, E>(f: (base: string) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const executor = yield* memoryExecutor(seed(C), [keyOf(A)], { perform: () => Effect.succeed({ st: "ok", res: {}, used: {} }) })
    const bound = yield* listenA2a({ port: 0, bounds: ["amount"] }).pipe(Effect.provideService(Executor, executor), Effect.provide(A2aTasks.memory()))
    return yield* f(bound.base)
  })

const fetchJson = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const r = await fetch(url, init)
    return { status: r.status, allow: r.headers.get("allow"), body: await r.json() as Record<string, unknown> }
  })

describe("the A2A endpoint over HTTP", () => {
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
