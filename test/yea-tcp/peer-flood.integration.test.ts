// `yea://` (SPEC §2.3 bounds): one peer holding idle sockets cannot lock other peers out. A peer
// past its share of the server's connections gets one ERROR `limit` line on each new socket and
// is closed, while a well-formed client from another address is answered; and a socket that sends
// only blank lines is closed at the idle timeout (only a complete frame is activity). Loopback
// only; every loop is bounded.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { CLIENT, eventually, FLOODER, floodFrom, openFrom, trickleUntilClosed } from "../support/flood.js"
import { shop, stores } from "../yea-service/support.js"

const hello = (id: string) => JSON.stringify({ yea: 1, id, verb: "HELLO" }) + "\n"
const lines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

describe("yea:// connections per peer", () => {
  it.scopedLive("answers a well-formed client while one peer floods past its share, which is refused `limit`", () =>
    Effect.gen(function* () {
      const { port } = yield* serveTcp(yield* shop, { port: 0, maxConnections: 32, maxConnectionsPerPeer: 8 })
      const flood = yield* floodFrom(port, FLOODER, 64)
      const refused = () => flood.filter((s) => s.isClosed())
      expect(yield* eventually(() => refused().length >= 56)).toBe(true)
      expect(refused().length).toBe(56)
      for (const s of refused()) {
        const [refusal] = lines(s.text())
        expect([refusal.kind, refusal.code]).toEqual(["ERROR", "limit"])
        expect(String(refusal.message)).toContain("peer")
      }
      // The well-formed client: 10 HELLOs, each on a fresh connection, each answered with the BRIEF.
      const kinds: Array<unknown> = []
      for (let i = 0; i < 10; i++) {
        const c = yield* openFrom(port, CLIENT)
        c.socket.write(hello(`h${i}`))
        yield* eventually(() => c.text().includes("\n"), 400)
        const [reply] = lines(c.text())
        kinds.push([reply?.re, reply?.kind])
        c.socket.destroy()
      }
      expect(kinds).toEqual(Array.from({ length: 10 }, (_, i) => [`h${i}`, "BRIEF"]))
      // The flooder's held sockets are served too: its share is not taken away.
      const held = flood.filter((s) => !s.isClosed())
      expect(held.length).toBe(8)
      held[0].socket.write(hello("held"))
      expect(yield* eventually(() => held[0].text().includes("\n"), 400)).toBe(true)
      expect(lines(held[0].text())[0].kind).toBe("BRIEF")
    }).pipe(Effect.provide(stores)), 60_000)

  it.scopedLive("closes a socket that sends only blank lines at the idle timeout", () =>
    Effect.gen(function* () {
      const { port } = yield* serveTcp(yield* shop, { port: 0, idleMs: 2500, slowMs: 60_000 })
      const raw = yield* openFrom(port, CLIENT)
      // A blank line every 50 ms (bounded: 200 of them, 10 s): skipped by §2.1, never activity. (The
      // idle check runs once a second, so the timeout is longer than two of its ticks.)
      expect(yield* trickleUntilClosed(raw, "\n", 50, 200)).toBe(true)
      expect(raw.text()).toBe("")
    }).pipe(Effect.provide(stores)), 30_000)
})
