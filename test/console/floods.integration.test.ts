// Floods on the console's server, on loopback, bounded: one peer holding many idle sockets does
// not lock a well-formed client out (its sockets over its share are refused with
// console/too_many_connections, unread); a kept-alive socket that sends blank lines instead of a
// request is closed; a chunked POST over the body limit is refused with console/too_large while
// it is still being sent (the server stops reading, it does not buffer the rest).
//
// The attacker connects from 127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux), the well-formed
// client from 127.0.0.1, so they are two peers as two hosts would be.
import { it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { Effect, Option } from "effect"
import * as Http from "node:http"
import * as Net from "node:net"
import { describe, expect } from "vitest"
import { serveConsole } from "../../src/console/listen.js"
import { MAX_TREE_BODY } from "../../src/console/server.js"
import type { ConsoleConfigShape } from "../../src/console/stores.js"

const none: ConsoleConfigShape = { store: Option.none(), ledger: Option.none(), policy: Option.none() }

const serve = (limits: Parameters<typeof serveConsole>[1]["limits"]) =>
  serveConsole(none, { port: 0, ...(limits ? { limits } : {}) }).pipe(Effect.provide(NodeContext.layer))

/** A socket from `localAddress` that sends nothing; resolves with it once connected, and records what comes back. */
const idleSocket = (port: number, localAddress: string) =>
  Effect.async<{ socket: Net.Socket; received: () => string; closed: Promise<void> }>((resume) => {
    let text = ""
    let onClose: () => void = () => {}
    const closed = new Promise<void>((r) => { onClose = r })
    const socket = Net.connect({ host: "127.0.0.1", port, localAddress }, () => resume(Effect.succeed({ socket, received: () => text, closed })))
    socket.on("data", (d: Buffer) => { text += d.toString() })
    socket.on("close", () => onClose())
    socket.on("error", () => {})
  })

const getInfo = (port: number, localAddress = "127.0.0.1") =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const req = Http.request({ host: "127.0.0.1", port, localAddress, path: "/api/info", agent: false }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => { text += d.toString() })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: text })))
    })
    req.on("error", (e) => resume(Effect.die(e)))
    req.end()
  })

describe("mandate console under floods", () => {
  it.scoped("a well-formed client is served while one peer holds many idle sockets", () =>
    Effect.gen(function*() {
      const s = yield* serve({ maxConnections: 16, maxConnectionsPerPeer: 4 })
      const port = new URL(s.url).port as unknown as number
      const sockets = yield* Effect.forEach(Array.from({ length: 40 }), () => idleSocket(Number(port), "127.0.0.2"), { concurrency: 8 })
      yield* Effect.addFinalizer(() => Effect.sync(() => sockets.forEach((x) => x.socket.destroy())))
      // Over its share, a socket is answered and closed before the server reads a byte of it.
      const refused = sockets.slice(4)
      yield* Effect.promise(() => Promise.all(refused.map((x) => x.closed)))
      for (const x of refused) {
        expect(x.received()).toMatch(/^HTTP\/1\.1 503 /)
        expect(x.received()).toContain("\"error\":\"console/too_many_connections\"")
      }
      // The first four are held, idle; every well-formed call from another peer is served.
      for (const x of sockets.slice(0, 4)) expect(x.socket.destroyed).toBe(false)
      const served = yield* Effect.forEach(Array.from({ length: 10 }), () => getInfo(Number(port)), { concurrency: 5 })
      expect(served.map((r) => r.status)).toEqual(Array(10).fill(200))
    }), 60_000)

  it.scoped("a kept-alive socket that sends blank lines instead of a request is closed", () =>
    Effect.gen(function*() {
      const s = yield* serve({ idleTimeoutMs: 200 })
      const port = Number(new URL(s.url).port)
      const c = yield* idleSocket(port, "127.0.0.1")
      yield* Effect.addFinalizer(() => Effect.sync(() => c.socket.destroy()))
      c.socket.write(`GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
      // A blank line (allowed before a request) every 50 ms would reset Node's own keep-alive
      // timer for ever; the console counts only whole requests.
      const drip = setInterval(() => { if (!c.socket.destroyed) c.socket.write("\r\n") }, 50)
      yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(drip)))
      yield* Effect.promise(() => c.closed)
      expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    }), 60_000)

  it.scoped("an oversized chunked POST is refused with console/too_large while it is still sent", () =>
    Effect.gen(function*() {
      const s = yield* serve(undefined)
      const port = Number(new URL(s.url).port)
      const result = yield* Effect.async<{ status: number; body: string; sent: number }>((resume) => {
        let sent = 0
        let done = false
        const req = Http.request({ host: "127.0.0.1", port, path: "/api/tally", method: "POST", agent: false, headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
          let text = ""
          res.on("data", (d: Buffer) => { text += d.toString() })
          res.on("end", () => { done = true; req.destroy(); resume(Effect.succeed({ status: res.statusCode ?? 0, body: text, sent })) })
        })
        req.on("error", () => { if (!done) { done = true; resume(Effect.succeed({ status: 0, body: "", sent })) } })
        // Up to 64 times the limit, in 64 KiB chunks, each only when the last was flushed.
        const chunk = Buffer.alloc(65_536, 0x20)
        const pump = () => {
          while (!done && sent < 64 * MAX_TREE_BODY) {
            sent += chunk.length
            if (!req.write(chunk)) return void req.once("drain", pump)
          }
          if (!done) req.end()
        }
        req.write("{\"name\":\"x\",\"tally\":\"")
        pump()
      })
      expect(result.status).toBe(413)
      expect(JSON.parse(result.body)).toMatchObject({ error: "console/too_large" })
      // Refused while the body was still coming: far less than everything the client would send.
      expect(result.sent).toBeLessThan(64 * MAX_TREE_BODY)
    }), 60_000)
})
