// `yea://` and `yeas://` memory and handshake bounds (SPEC §2.1 frames of at most 1 MiB, §2.3 a
// server bounds what peers make it hold): partial frames of all connections together draw on one
// pool, so many sockets each holding most of a frame cannot make the server hold them all; and over
// TLS, sockets that never finish a handshake are bounded per peer and timed out. In each, a
// well-formed client from another address is answered while the attacker holds what it can.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as net from "node:net"
import * as tls from "node:tls"
import { partialPool } from "../../src/bind/yea-stream/partial-pool.js"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { CLIENT, eventually, FLOODER, floodFrom, openFrom } from "../support/flood.js"
import { shop, stores } from "../yea-service/support.js"

const hello = (id: string) => JSON.stringify({ yea: 1, id, verb: "HELLO" }) + "\n"
const lines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)
const MiB = 1024 * 1024

describe("partial frames across connections", () => {
  it("the pool never lends more than its bound and takes back what a closed connection drew", () => {
    const pool = partialPool({ maxBytes: 100, freePerConnection: 10 })
    const a = {}, b = {}, c = {}
    expect(pool.hold(a, 10)).toBe(true)
    expect(pool.drawn()).toBe(0)
    expect(pool.hold(a, 70)).toBe(true)
    expect(pool.hold(b, 50)).toBe(true)
    expect(pool.drawn()).toBe(100)
    expect(pool.hold(c, 11)).toBe(false)
    expect(pool.hold(c, 10)).toBe(true)
    expect(pool.hold(a, 5)).toBe(true)
    expect(pool.drawn()).toBe(40)
    pool.release(b)
    expect(pool.drawn()).toBe(0)
  })

  it.scopedLive("sockets holding large partial frames are refused `limit` past the pool; a well-formed client is answered", () =>
    Effect.gen(function* () {
      const pool = partialPool({ maxBytes: 2 * MiB })
      const { port } = yield* serveTcp(yield* shop, { port: 0, maxConnections: 64, maxConnectionsPerPeer: 32, partialPool: pool })
      const flood = yield* floodFrom(port, FLOODER, 16)
      let most = 0
      for (const s of flood) {
        s.socket.write("x".repeat(900 * 1024))
        yield* eventually(() => s.isClosed() || pool.drawn() > most, 40)
        most = Math.max(most, pool.drawn())
      }
      const refused = () => flood.filter((s) => s.isClosed())
      yield* eventually(() => refused().length >= 14)
      // 900 KiB frames each draw 836 KiB above the free allowance: two fit in 2 MiB.
      expect(refused().length).toBe(14)
      expect(most).toBeLessThanOrEqual(2 * MiB)
      for (const s of refused()) {
        const [refusal] = lines(s.text())
        expect([refusal.kind, refusal.code]).toEqual(["ERROR", "limit"])
      }
      // The well-formed client is answered while the two partial frames are held.
      const c = yield* openFrom(port, CLIENT)
      c.socket.write(hello("h"))
      yield* eventually(() => c.text().includes("\n"))
      expect(lines(c.text()).map((r) => [r.re, r.kind])).toEqual([["h", "BRIEF"]])
      // What the held sockets drew returns when they close.
      for (const s of flood) s.socket.destroy()
      expect(yield* eventually(() => pool.drawn() === 0)).toBe(true)
    }).pipe(Effect.provide(stores)), 60_000)
})

const cert = (() => {
  const dir = mkdtempSync(join(tmpdir(), "yeas-"))
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "k.pem", "-out", "c.pem", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { cwd: dir, stdio: "pipe" })
  return { key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) }
})()

describe("yeas:// handshakes", () => {
  it.scopedLive("sockets that never finish a handshake are bounded per peer and timed out; a TLS client is answered", () =>
    Effect.gen(function* () {
      const { port } = yield* serveTcp(yield* shop, {
        port: 0, maxConnections: 8, maxConnectionsPerPeer: 2, handshakeTimeoutMs: 1500,
        tls: { key: cert.key, cert: cert.cert }
      })
      // The attacker opens TCP sockets to the TLS port and never says a word.
      const flood = yield* floodFrom(port, FLOODER, 12)
      const closed = () => flood.filter((s) => s.isClosed()).length
      // Its share before a handshake is twice its share of connections: 4 are held, 8 closed.
      expect(yield* eventually(() => closed() >= 8)).toBe(true)
      expect(closed()).toBe(8)
      const secure = yield* Effect.acquireRelease(
        Effect.async<tls.TLSSocket>((resume) => {
          const socket = net.connect({ host: "127.0.0.1", port, localAddress: CLIENT })
          const s = tls.connect({ socket, servername: "127.0.0.1", ca: cert.cert }, () => resume(Effect.succeed(s)))
          s.on("error", () => {})
        }),
        (s) => Effect.sync(() => s.destroy())
      )
      let got = ""
      secure.on("data", (d: Buffer) => { got += d.toString("utf8") })
      secure.write(hello("t"))
      yield* eventually(() => got.includes("\n"))
      expect(lines(got).map((r) => [r.re, r.kind])).toEqual([["t", "BRIEF"]])
      // The 4 silent sockets are closed at the handshake timeout.
      expect(yield* eventually(() => closed() === 12, 100)).toBe(true)
    }).pipe(Effect.provide(stores)), 60_000)
})
