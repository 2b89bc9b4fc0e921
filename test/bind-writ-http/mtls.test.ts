// mTLS peers (sections 7.6 and 10) over real TLS connections with certificates made by the openssl
// CLI: the peer is the client certificate's did:key URI SAN, or a transport identity the bindings
// file maps to keys; a verified certificate that names no known identity (or two) is a peer with
// no binding and fails closed; no header ever names the peer.
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { X509Certificate } from "node:crypto"
import { postWrit, type PostOptions } from "../../src/bind/writ-http/client.js"
import { peerOfCertificate, parseSubjectAltName } from "../../src/bind/writ-http/peer.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { makePki, type Pki, serveScoped, settableClock } from "./inproc.js"
import { call, key, prefix, revoke, tempDir, writ } from "./support.js"

const A = key(21) // root issuer and caller
const B = key(22) // another agent
const E = key(23) // the executor

const app = { perform: (): Effect.Effect<Outcome> => Effect.succeed({ st: "ok", res: { done: true } }) }

let pki: Pki
let certs: Record<string, { key: string; cert: string }>
const clock = settableClock()

/** Three executors over mTLS for the whole file: bindings, anonymous clients allowed, rate-limited. */
class Servers extends Context.Tag("test/bind-writ-http/mtls/Servers")<Servers, {
  readonly srv: { readonly url: string }
  readonly anon: { readonly url: string }
  readonly limited: { readonly url: string }
}>() {}
const ServersLive = Layer.scoped(Servers, Effect.gen(function*() {
  pki = makePki(tempDir("pki"))
  certs = {
    a: pki.client("agent-a", `URI:${A.did}`),
    b: pki.client("agent-b", `URI:${B.did}`),
    none: pki.client("nobody", null),
    unknownDns: pki.client("stranger", "DNS:stranger.example"),
    gateway: pki.client("gateway", "DNS:gateway.example"),
    two: pki.client("two", `URI:${A.did},URI:${B.did}`),
    byFingerprint: pki.client("fp", "DNS:fp.example"),
    otherCa: pki.client("other", `URI:${A.did}`, "other")
  }
  const fp = `sha256:${new X509Certificate(certs.byFingerprint.cert).fingerprint256.replace(/:/g, "").toLowerCase()}`
  const bindings = { "dns:gateway.example": [A.did, B.did], [fp]: [A.did] }
  const tls = { key: pki.serverKey, cert: pki.serverCert, clientCa: pki.caCert }
  return {
    srv: yield* serveScoped({ executorKey: E, roots: [A], app, bindings, tls }),
    anon: yield* serveScoped({ executorKey: E, roots: [A], app, tls: { ...tls, allowAnonymous: true } }),
    limited: yield* serveScoped({
      executorKey: E, roots: [A], app, bindings, tls, rate: { burst: 1, perSecond: 1 }, rateClock: clock.clock
    })
  }
}))

const as = (who: keyof typeof certs | null, extra: PostOptions = {}): PostOptions => ({
  ...extra,
  tls: { ca: pki.caCert, ...(who === null ? {} : { cert: certs[who].cert, key: certs[who].key }) }
})
const post = (url: string, body: JsonObject, o: PostOptions) => Effect.either(postWrit(url, body, o))
const tallyOf = (url: string, body: JsonObject, o: PostOptions) =>
  Effect.map(postWrit(url, body, o), (r) => {
    expect(r.status).toBe(200)
    const j = Option.getOrThrow(r.json) as JsonObject
    return { tally: j.tally as JsonObject, bytes: Buffer.from(r.bytes).toString() }
  })
const chainA = () => [writ(A, E, { act: prefix("t/") })]
const code = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

layer(ServersLive, { excludeTestServices: true, timeout: "60 seconds" })("mTLS peer binding (section 7.6)", (it) => {
  it.effect("a certificate whose URI SAN is the caller's did:key speaks for it", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      const { tally } = yield* tallyOf(srv.url, call(A, chainA(), "t/x"), as("a"))
      expect([tally.st, code(tally)]).toEqual(["ok", null])
    }))

  it.effect("a certificate naming another key is peer_mismatch, over a real connection", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      const { tally } = yield* tallyOf(srv.url, call(A, chainA(), "t/x"), as("b"))
      expect([tally.st, code(tally)]).toEqual(["failed", "peer_mismatch"])
    }))

  it.effect("a captured call replayed over another peer's connection gets peer_mismatch, not the stored tally", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      const c = call(A, chainA(), "t/x")
      const first = yield* tallyOf(srv.url, c, as("a"))
      expect(first.tally.st).toBe("ok")
      for (const who of ["b", "none", "unknownDns", "two"] as const) {
        const replay = yield* tallyOf(srv.url, c, as(who))
        expect([who, replay.tally.st, code(replay.tally)]).toEqual([who, "failed", "peer_mismatch"])
      }
      const again = yield* tallyOf(srv.url, c, as("a"))
      expect(again.bytes).toBe(first.bytes)
    }))

  it.effect("a verified certificate naming no known identity fails closed, whatever the headers say", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      const headers = {
        "x-forwarded-client-cert": `By=spiffe://x;URI=${A.did}`,
        "x-writ-peer": A.did,
        "x-client-did": A.did,
        "ssl-client-cert": "-----BEGIN CERTIFICATE-----",
        forwarded: `for=${A.did}`
      }
      for (const who of ["none", "unknownDns"] as const) {
        const { tally } = yield* tallyOf(srv.url, call(A, chainA(), "t/x"), as(who, { headers }))
        expect([who, tally.st, code(tally)]).toEqual([who, "failed", "peer_mismatch"])
      }
    }))

  it.effect("a certificate carrying two identities names no one (fails closed even for either key)", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      for (const who of [A, B]) {
        const { tally } = yield* tallyOf(srv.url, call(who, [writ(A, E, { act: prefix("t/") })], "t/x"), as("two"))
        expect(code(tally)).toBe("peer_mismatch")
      }
    }))

  it.effect("the bindings file maps a SAN or a certificate fingerprint to keys (a gateway may speak for several)", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      const g = yield* tallyOf(srv.url, call(A, chainA(), "t/x"), as("gateway"))
      expect([g.tally.st, code(g.tally)]).toEqual(["ok", null])
      // B is bound to the gateway; the chain's leaf issuer must still be B (no_standing otherwise).
      const wb = writ(A, B, { act: prefix("t/") })
      const gb = yield* tallyOf(srv.url, call(B, [wb, writ(B, E, { act: prefix("t/") }, wb)], "t/x"), as("gateway"))
      expect([gb.tally.st, code(gb.tally)]).toEqual(["ok", null])
      const f = yield* tallyOf(srv.url, call(A, chainA(), "t/x"), as("byFingerprint"))
      expect([f.tally.st, code(f.tally)]).toEqual(["ok", null])
      const fb = yield* tallyOf(srv.url, call(B, [wb, writ(B, E, { act: prefix("t/") }, wb)], "t/x"), as("byFingerprint"))
      expect(code(fb.tally)).toBe("peer_mismatch")
    }))

  it.effect("the TLS layer refuses a certificate from another CA, and a client with none when mTLS is required", () =>
    Effect.gen(function*() {
      const { srv } = yield* Servers
      for (const who of ["otherCa", null] as const) {
        const r = yield* post(srv.url, call(A, chainA(), "t/x"), as(who))
        expect(r._tag).toBe("Left")
      }
    }))

  it.effect("with anonymous clients allowed: no certificate is no peer (check skipped); an unverified one is refused, not anonymous", () =>
    Effect.gen(function*() {
      const { anon } = yield* Servers
      const { tally } = yield* tallyOf(anon.url, call(A, chainA(), "t/x"), as(null, { headers: { "x-writ-peer": B.did } }))
      expect([tally.st, code(tally)]).toEqual(["ok", null])
      const r = yield* post(anon.url, call(A, chainA(), "t/x"), as("otherCa"))
      expect(r._tag === "Right" ? [r.right.status, Option.getOrNull(r.right.json) as Json] : r.left.message)
        .toEqual([403, { error: "mandate/unverified_client_certificate" }])
      const n = yield* tallyOf(anon.url, call(A, chainA(), "t/x"), as("none"))
      expect(code(n.tally)).toBe("peer_mismatch")
    }))

  it.effect("a revoke is not subject to peer binding, and its rate is limited per authenticated peer", () =>
    Effect.gen(function*() {
      const { limited } = yield* Servers
      const status = (who: keyof typeof certs) =>
        Effect.map(post(limited.url, revoke(A, chainA()), as(who)), (r) => (r._tag === "Right" ? r.right.status : -1))
      expect(yield* status("b")).toBe(200) // B's connection revokes A's writ: allowed (section 7.6)
      expect(yield* status("b")).toBe(429)
      expect(yield* status("a")).toBe(200) // another peer, another bucket
      expect(yield* status("gateway")).toBe(200)
      expect(yield* status("a")).toBe(429)
      clock.advance(1000)
      expect(yield* status("a")).toBe(200)
    }))
})

describe("certificate identities", () => {
  it("reads Node's subjectaltname, quoted values included", () => {
    expect(parseSubjectAltName(`URI:${A.did}, DNS:a.example, URI:"x, y"`)).toEqual([
      ["uri", A.did], ["dns", "a.example"], ["uri", "x, y"]
    ])
    expect(parseSubjectAltName(undefined)).toEqual([])
  })

  it("names a peer only by exactly one recognized identity; an invalid did:key is not one", () => {
    const cert = (san: string) => ({ subjectaltname: san, fingerprint256: "AA:BB" }) as never
    expect(peerOfCertificate(cert(`URI:${A.did}`), {})).toEqual({ _tag: "named", id: A.did })
    expect(peerOfCertificate(cert("URI:did:key:z6MkNOTAKEY"), {})).toEqual({ _tag: "unnamed" })
    expect(peerOfCertificate(cert("DNS:g.example"), { "dns:g.example": [A.did] })).toEqual({ _tag: "named", id: "dns:g.example" })
    expect(peerOfCertificate(cert("DNS:g.example"), { "sha256:aabb": [A.did] })).toEqual({ _tag: "named", id: "sha256:aabb" })
    expect(peerOfCertificate(cert(`URI:${A.did}`), { "sha256:aabb": [A.did] })).toEqual({ _tag: "unnamed" })
  })
})
