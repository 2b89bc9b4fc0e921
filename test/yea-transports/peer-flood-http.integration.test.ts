// The YEA HTTP bridge (SPEC §2.4): one peer holding idle sockets cannot lock other peers out. A
// peer past its share of the bridge's connections gets `429` with an ERROR `limit` line on each
// new socket and is closed, while a well-formed client from another address is answered; and a
// kept-alive connection that sends only blank lines is closed at the idle timeout (only a complete
// request is activity). Loopback only; every loop is bounded.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { serveHttpBridge } from "../../src/bind/yea-http/server.js"
import { CLIENT, eventually, FLOODER, floodFrom, openFrom, trickleUntilClosed } from "../support/flood.js"
import { shop, stores } from "../yea-service/support.js"

const hello = (id: string) => JSON.stringify({ yea: 1, id, verb: "HELLO" })

describe("YEA HTTP bridge connections per peer", () => {
  it.scopedLive("answers a well-formed client while one peer floods past its share, which is refused 429 `limit`", () =>
    Effect.gen(function* () {
      const { port, url } = yield* serveHttpBridge(yield* shop, { port: 0, maxConnections: 32, maxConnectionsPerPeer: 8, idleMs: 60_000 })
      const flood = yield* floodFrom(port, FLOODER, 64)
      const refused = () => flood.filter((s) => s.isClosed())
      expect(yield* eventually(() => refused().length >= 56)).toBe(true)
      expect(refused().length).toBe(56)
      for (const s of refused()) {
        const [head, body] = s.text().split("\r\n\r\n")
        expect(head.split("\r\n")[0]).toBe("HTTP/1.1 429 Too Many Requests")
        const refusal = JSON.parse(body.trim()) as Record<string, unknown>
        expect([refusal.kind, refusal.code]).toEqual(["ERROR", "limit"])
      }
      // The well-formed client: 10 HELLOs over fetch, each answered 200 with the BRIEF.
      const answers: Array<unknown> = []
      for (let i = 0; i < 10; i++) {
        const r = yield* Effect.promise(() =>
          fetch(url, { method: "POST", body: hello(`h${i}`), signal: AbortSignal.timeout(10_000) })
            .then(async (res) => [res.status, (JSON.parse((await res.text()).trim()) as { kind: string }).kind])
        )
        answers.push(r)
      }
      expect(answers).toEqual(Array(10).fill([200, "BRIEF"]))
      expect(flood.filter((s) => !s.isClosed()).length).toBe(8)
    }).pipe(Effect.provide(stores)), 60_000)

  it.scopedLive("closes a kept-alive connection that sends only blank lines at the idle timeout", () =>
    Effect.gen(function* () {
      const { port } = yield* serveHttpBridge(yield* shop, { port: 0, idleMs: 500 })
      const raw = yield* openFrom(port, CLIENT)
      raw.socket.write("GET /.well-known/yea HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      expect(yield* eventually(() => raw.text().includes("BRIEF"))).toBe(true)
      // A blank line every 50 ms (bounded: 200 of them, 10 s): never a request, so never activity.
      expect(yield* trickleUntilClosed(raw, "\r\n", 50, 200)).toBe(true)
      expect(raw.text().match(/HTTP\/1\.1 /g)?.length).toBe(1)
    }).pipe(Effect.provide(stores)), 30_000)
})
