// `yea://` over loopback TCP (SPEC §2): the flow through the real client, multiplexing, and the
// hostile inputs the issue lists (oversized frame, frame split across reads, invalid UTF-8,
// connections beyond the cap, a client that stops reading, idle and slow peers).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { connectTcp } from "../../src/bind/yea-tcp/client.js"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { makeClient } from "../../src/yea/client.js"
import { AGENT, issue } from "../yea/_helpers.js"
import { shop, stores } from "../yea-service/support.js"
import { rawTcp } from "./raw.js"

const agentLayer = Layer.merge(Signer.fromSeed(AGENT), RandomBytes.seeded(AGENT))
const hello = (id: string) => JSON.stringify({ yea: 1, id, verb: "HELLO" }) + "\n"

describe("yea:// over TCP", () => {
  it.scopedLive("runs the flow through the client and multiplexes concurrent requests", () =>
    Effect.gen(function* () {
      const service = yield* shop
      const { port } = yield* serveTcp(service, { port: 0 })
      const conn = yield* connectTcp(new URL(`yea://127.0.0.1:${port}`))
      const agent = yield* Effect.provide(makeClient(conn, { grants: [issue([{ svc: ["shop.example"] }])] }), agentLayer)
      expect((yield* agent.hello()).kind).toBe("BRIEF")
      const results = yield* Effect.all(Array.from({ length: 20 }, () => agent.ask("shop.search", { tag: "vegan" })), { concurrency: "unbounded" })
      expect(results.every((r) => r.kind === "ANSWER")).toBe(true)
      const ps = yield* agent.intent("shop.order", { items: [{ sku: "m01", qty: 1 }], deliver: "2026-10-01" })
      if (ps.kind !== "PROPOSALS") throw new Error(ps.kind)
      const events: Array<string> = []
      const r = yield* agent.commit(ps.proposals[0], { onEvent: (e) => Effect.sync(() => void events.push(e.message)) })
      expect(r.kind).toBe("RECEIPT")
      expect(events).toEqual(["authorizing card"])
    }).pipe(Effect.provide(stores)))

  it.scopedLive("refuses an oversized frame and stays usable; reassembles split frames; refuses invalid UTF-8", () =>
    Effect.gen(function* () {
      const service = yield* shop
      const { port } = yield* serveTcp(service, { port: 0 })
      const peer = yield* Effect.promise(() => rawTcp(port))
      // 1 MiB + 1 of a string member, sent in 64 KiB pieces, then the rest of the line.
      const piece = "a".repeat(65536)
      peer.write('{"yea":1,"id":"big","verb":"HELLO","x":"')
      for (let i = 0; i < 17; i++) peer.write(piece)
      peer.write('"}\n')
      const refused = yield* Effect.promise(() => peer.next())
      expect([refused.kind, refused.code]).toEqual(["ERROR", "bad_frame"])
      // Split across reads, byte by byte.
      for (const ch of hello("split")) peer.write(ch)
      const brief = yield* Effect.promise(() => peer.next())
      expect([brief.kind, brief.re]).toEqual(["BRIEF", "split"])
      peer.write(Buffer.concat([Buffer.from('{"yea":1,"id":"u","verb":"HELLO","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]))
      const bad = yield* Effect.promise(() => peer.next())
      expect([bad.kind, bad.code]).toEqual(["ERROR", "bad_frame"])
      peer.write("not json\n" + hello("after"))
      expect((yield* Effect.promise(() => peer.next())).code).toBe("bad_frame")
      expect((yield* Effect.promise(() => peer.next())).re).toBe("after")
      peer.socket.destroy()
    }).pipe(Effect.provide(stores)))

  it.scopedLive("refuses connections beyond the cap with one ERROR limit line", () =>
    Effect.gen(function* () {
      const service = yield* shop
      const { port } = yield* serveTcp(service, { port: 0, maxConnections: 2 })
      const a = yield* Effect.promise(() => rawTcp(port))
      const b = yield* Effect.promise(() => rawTcp(port))
      a.write(hello("a"))
      b.write(hello("b"))
      yield* Effect.promise(() => Promise.all([a.next(), b.next()]))
      const c = yield* Effect.promise(() => rawTcp(port))
      const refusal = yield* Effect.promise(() => c.next())
      expect([refusal.kind, refusal.code]).toEqual(["ERROR", "limit"])
      yield* Effect.promise(() => c.closed())
      a.socket.destroy()
      yield* Effect.promise(() => a.closed())
      b.socket.destroy()
    }).pipe(Effect.provide(stores)))

  it.scopedLive("disconnects a client that stops reading, and idle and slow peers", () =>
    Effect.gen(function* () {
      const service = yield* shop
      const { port } = yield* serveTcp(service, { port: 0, maxBufferedBytes: 64 * 1024, idleMs: 1500, slowMs: 1500 })
      const stuck = yield* Effect.promise(() => rawTcp(port))
      stuck.socket.pause()
      const ask = (i: number) => JSON.stringify({ yea: 1, id: `q${i}`, verb: "ASK", capability: "shop.search", budget: 1_000_000 }) + "\n"
      for (let i = 0; i < 2000; i++) stuck.write(ask(i))
      // While it does not read, its replies pile up on the server, which gives up on it.
      yield* Effect.sleep("3 seconds")
      stuck.socket.resume()
      yield* Effect.promise(() => stuck.closed(20_000))
      expect(stuck.received()).toBeLessThan(2000)
      const idle = yield* Effect.promise(() => rawTcp(port))
      yield* Effect.promise(() => idle.closed(10_000))
      const slow = yield* Effect.promise(() => rawTcp(port))
      slow.write('{"yea":1,')
      yield* Effect.promise(() => slow.closed(10_000))
    }).pipe(Effect.provide(stores)))
})
