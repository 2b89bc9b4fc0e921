// Section 12 (Denial of service): every listener has header, body and idle
// timeouts and a connection cap. A slowloris client (headers a byte at a time), a slow body and an
// idle connection are each dropped by the server, while a good client is served throughout; a
// connection past the cap is closed at accept, unread, and the listener serves again once one
// closes. Loopback only; every loop is bounded in count and time.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Net from "node:net"
import { postWrit } from "../../src/bind/writ-http/client.js"
import type { JsonObject } from "../../src/kernel/json.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { serveScoped } from "./inproc.js"
import { call, key, prefix, writ } from "./support.js"

const A = key(41)
const E = key(42)
const app = { perform: (): Effect.Effect<Outcome> => Effect.succeed({ st: "ok", res: { done: true } }) }
const good = () => call(A, [writ(A, E, { act: prefix("t/") })], "t/ok")

/** A raw connection: what it received, and a promise that settles when the server closes it. */
interface Raw {
  readonly socket: Net.Socket
  readonly received: () => string
  readonly closed: Promise<string>
}

const connect = (url: string, localAddress?: string): Effect.Effect<Raw> =>
  Effect.async<Raw>((resume) => {
    const u = new URL(url)
    let got = ""
    let settle: (s: string) => void = () => {}
    const closed = new Promise<string>((r) => { settle = r })
    const socket = Net.connect({ port: Number(u.port), host: u.hostname, ...(localAddress === undefined ? {} : { localAddress }) })
    socket.on("data", (d: Buffer) => { got += d.toString("latin1") })
    socket.on("error", () => {})
    socket.on("close", () => settle(got))
    socket.once("connect", () => resume(Effect.succeed({ socket, received: () => got, closed })))
  })

/** Writes `chunk` every `everyMs` until the server closes the connection, at most `max` times. */
const trickle = (raw: Raw, chunk: string, everyMs: number, max: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < max && !raw.socket.destroyed && raw.socket.writable; i++) {
      raw.socket.write(chunk)
      yield* Effect.sleep(everyMs)
    }
  })

const waitClosed = (raw: Raw) => Effect.promise(() => raw.closed)

/** A good call over a fresh connection: its status. */
const goodCall = (url: string) =>
  Effect.map(postWrit(url, good(), { timeout: "10 seconds" }), (a) => [a.status, Option.map(a.json, (j) => ((j as JsonObject).tally as JsonObject).st)])

const statusLine = (s: string) => s.split("\r\n")[0]

describe("listener timeouts", () => {
  it.scopedLive("drops a slowloris client, a slow body and an idle connection while a good client is served", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({
        executorKey: E, roots: [A], app,
        limits: { headersTimeoutMs: 1500, bodyTimeoutMs: 1500, idleTimeoutMs: 1000, maxConnections: 64 }
      })
      const slowHeaders = yield* connect(srv.url)
      const slowBody = yield* connect(srv.url)
      const idle = yield* connect(srv.url)
      // Slowloris: a request line, then one header byte every 50 ms (bounded: 200 bytes, 10 s).
      slowHeaders.socket.write("POST /writ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
      yield* Effect.forkScoped(trickle(slowHeaders, "X", 50, 200))
      // Slow body: complete headers announcing 4000 bytes, then one byte every 50 ms.
      slowBody.socket.write(
        "POST /writ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/writ+json\r\nContent-Length: 4000\r\n\r\n"
      )
      yield* Effect.forkScoped(trickle(slowBody, " ", 50, 200))

      // The good client is served while the three are held (bounded: 5 calls, one after another).
      const served: Array<unknown> = []
      for (let i = 0; i < 5; i++) served.push(yield* goodCall(srv.url))
      expect(served).toEqual(Array(5).fill([200, Option.some("ok")]))

      // Each is dropped by the server with 408, never answered 200.
      const [h, b, i] = yield* Effect.all([waitClosed(slowHeaders), waitClosed(slowBody), waitClosed(idle)], { concurrency: 3 })
        .pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("a slow client was not dropped") }))
      expect([statusLine(h), statusLine(b), statusLine(i)]).toEqual(Array(3).fill("HTTP/1.1 408 Request Timeout"))
      // The slow body reached the binding and is audited as unreadable (section 9.3); the other
      // two never became requests. The entry is written when the platform interrupts the handler
      // of the dropped connection, which can come after the client has seen the close: wait for
      // it (bounded: 100 looks, 10 s), then require exactly that one.
      const errors = Effect.map(srv.audit, (a) => a.filter((e) => e.outcome === "error").map((e) => e.reason))
      for (let n = 0; n < 100 && (yield* errors).length === 0; n++) yield* Effect.sleep(100)
      expect(yield* errors).toEqual(["mandate/body_unreadable"])
      // And the good client is still served after.
      expect(yield* goodCall(srv.url)).toEqual([200, Option.some("ok")])
    }), 30_000)

  it.scopedLive("closes a kept-alive connection that sits idle after its answer", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({ executorKey: E, roots: [A], app, limits: { idleTimeoutMs: 200 } })
      const raw = yield* connect(srv.url)
      raw.socket.write("GET /.well-known/writ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      const got = yield* waitClosed(raw).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("an idle kept-alive connection was not closed") })
      )
      // It was answered once, kept alive, then closed for idling.
      expect(statusLine(got)).toBe("HTTP/1.1 200 OK")
      expect(got.toLowerCase()).toContain("connection: keep-alive")
    }), 30_000)
})

describe("connection cap", () => {
  it.scopedLive("closes connections past the cap at accept, unread, and serves again once one closes", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({
        executorKey: E, roots: [A], app,
        limits: { maxConnections: 3, headersTimeoutMs: 20_000, idleTimeoutMs: 20_000 }
      })
      // Three connections held open, each known to be accepted: it was answered and kept alive.
      // Each comes from a peer of its own (another loopback address): one peer alone never
      // reaches the cap (peer-flood.integration.test.ts).
      const held: Array<Raw> = []
      for (let n = 0; n < 3; n++) {
        const raw = yield* connect(srv.url, `127.0.0.${n + 3}`)
        raw.socket.write("GET /.well-known/writ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for (let i = 0; i < 200 && !raw.received().includes("\r\n\r\n"); i++) yield* Effect.sleep(10)
        expect(statusLine(raw.received())).toBe("HTTP/1.1 200 OK")
        held.push(raw)
      }
      // A fourth is closed without an answer, whatever it sends.
      const over = yield* connect(srv.url, "127.0.0.6")
      over.socket.write("GET /.well-known/writ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      expect(yield* waitClosed(over)).toBe("")
      const refused = yield* Effect.either(goodCall(srv.url))
      expect(refused._tag).toBe("Left")
      // One held connection closes: a good call is served again (the server counts the close
      // asynchronously, so it is tried a bounded number of times).
      held[0].socket.destroy()
      let again: unknown = "not served"
      for (let i = 0; i < 50 && again !== 200; i++) {
        const r = yield* Effect.either(goodCall(srv.url))
        if (r._tag === "Right") again = r.right[0]
        else yield* Effect.sleep(20)
      }
      expect(again).toBe(200)
      for (const h of held) h.socket.destroy()
    }), 30_000)
})
