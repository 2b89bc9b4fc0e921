// Section 12 (Denial of service): one peer holding idle sockets cannot lock other peers out of the
// HTTP binding. A peer past its share of the listener's connections has each new socket answered
// 429 `mandate/too_many_connections` and closed, while a well-formed client from another address
// is served; and a kept-alive connection that sends only blank lines is closed at the idle
// timeout (only a complete request is activity). Loopback only; every loop is bounded.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { join } from "node:path"
import { postWrit } from "../../src/bind/writ-http/client.js"
import { HTTP_CODES } from "../../src/bind/writ-http/server.js"
import type { JsonObject } from "../../src/kernel/json.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { CLIENT, eventually, FLOODER, floodFrom, openFrom, trickleUntilClosed } from "../support/flood.js"
import { makePki, serveScoped } from "./inproc.js"
import { call, key, prefix, spawnServe, tempDir, writ, writeKeyFile } from "./support.js"

const A = key(51)
const E = key(52)
const app = { perform: (): Effect.Effect<Outcome> => Effect.succeed({ st: "ok", res: { done: true } }) }
const good = () => call(A, [writ(A, E, { act: prefix("t/") })], "t/ok")
const goodCall = (url: string) =>
  Effect.map(postWrit(url, good(), { timeout: "10 seconds" }), (a) => [a.status, Option.map(a.json, (j) => ((j as JsonObject).tally as JsonObject).st)])

describe("connections per peer (section 12)", () => {
  it.scopedLive("serves a well-formed client while one peer floods past its share, which is refused with the code", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({
        executorKey: E, roots: [A], app,
        limits: { maxConnections: 32, maxConnectionsPerPeer: 8, headersTimeoutMs: 60_000, idleTimeoutMs: 60_000 }
      })
      const port = Number(new URL(srv.url).port)
      // 64 idle sockets from one peer: twice the listener's cap.
      const flood = yield* floodFrom(port, FLOODER, 64)
      const refused = () => flood.filter((s) => s.isClosed())
      expect(yield* eventually(() => refused().length >= 56)).toBe(true)
      // Exactly its share is held; every other socket was answered 429 with the code, then closed.
      expect(refused().length).toBe(56)
      for (const s of refused()) {
        expect(s.text().split("\r\n")[0]).toBe("HTTP/1.1 429 Too Many Requests")
        expect(JSON.parse(s.text().split("\r\n\r\n")[1])).toEqual({ error: HTTP_CODES.tooManyConnections })
      }
      // The well-formed client (another address) makes its calls, each on a fresh connection.
      const served: Array<unknown> = []
      for (let i = 0; i < 10; i++) served.push(yield* goodCall(srv.url))
      expect(served).toEqual(Array(10).fill([200, Option.some("ok")]))
      // The flooder's held sockets are still open (they were not dropped to make room).
      expect(flood.filter((s) => !s.isClosed()).length).toBe(8)
      // One of them closes: the flooder may open one more, and no more than that.
      flood.find((s) => !s.isClosed())!.socket.destroy()
      let again = false
      for (let i = 0; i < 50 && !again; i++) {
        const s = yield* openFrom(port, FLOODER)
        yield* Effect.sleep(50)
        again = !s.isClosed()
        if (!again) yield* Effect.sleep(50)
      }
      expect(again).toBe(true)
      const over = yield* openFrom(port, FLOODER)
      expect(yield* eventually(() => over.isClosed())).toBe(true)
      expect(over.text()).toContain(HTTP_CODES.tooManyConnections)
    }), 60_000)

  it.scopedLive("closes a kept-alive connection that sends only blank lines at the idle timeout", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({ executorKey: E, roots: [A], app, limits: { idleTimeoutMs: 300 } })
      const raw = yield* openFrom(Number(new URL(srv.url).port), CLIENT)
      raw.socket.write("GET /.well-known/writ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      expect(yield* eventually(() => raw.text().includes("\r\n\r\n"))).toBe(true)
      // A blank line every 50 ms (bounded: 200 of them, 10 s): never a request, so never activity.
      expect(yield* trickleUntilClosed(raw, "\r\n", 50, 200)).toBe(true)
      expect(raw.text().split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
      expect(raw.text().match(/HTTP\/1\.1 /g)?.length).toBe(1)
    }), 30_000)

  it.scopedLive("over TLS, closes a flooding peer's sockets past its share at accept, unanswered, and serves another peer", () =>
    Effect.gen(function*() {
      const pki = makePki(tempDir("peer-flood-pki"))
      const srv = yield* serveScoped({
        executorKey: E, roots: [A], app, tls: { key: pki.serverKey, cert: pki.serverCert },
        limits: { maxConnections: 16, maxConnectionsPerPeer: 4, headersTimeoutMs: 60_000, idleTimeoutMs: 60_000 }
      })
      // 24 sockets that never start a handshake: its share is held, the rest closed unanswered
      // (a readable refusal would cost the handshake the cap spares).
      const flood = yield* floodFrom(Number(new URL(srv.url).port), FLOODER, 24)
      expect(yield* eventually(() => flood.filter((s) => s.isClosed()).length >= 20)).toBe(true)
      expect(flood.filter((s) => s.isClosed()).map((s) => s.text())).toEqual(Array(20).fill(""))
      const served: Array<unknown> = []
      for (let i = 0; i < 5; i++) {
        served.push(yield* Effect.map(postWrit(srv.url, good(), { timeout: "10 seconds", tls: { ca: pki.caCert } }), (a) => a.status))
      }
      expect(served).toEqual(Array(5).fill(200))
      expect(flood.filter((s) => !s.isClosed()).length).toBe(4)
    }), 60_000)

  it.live("`writ serve` refuses a per-peer cap that one peer could fill the listener with", () =>
    Effect.gen(function*() {
      const dir = tempDir("peer-flood")
      const keyFile = writeKeyFile(dir, key(53))
      const base = ["--port", "0", "--store", join(dir, "s.db"), "--key", keyFile, "--root", key(54).did, "--max-connections", "16"]
      for (const perPeer of ["16", "17", "0"]) {
        const failed = yield* Effect.flip(Effect.tryPromise(() => spawnServe([...base, "--max-connections-per-peer", perPeer])))
        expect(String(failed.error)).toMatch(/mandate\/bad_limit/)
      }
    }), 60_000)
})
