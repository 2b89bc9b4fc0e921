// The YEA byte-stream client (src/bind/yea-stream/client.ts) on in-process pipes: replies routed
// by `re` whatever their order, EVENTs to their request's callback on the connection's own runtime
// (the caller's logger, not the default runtime's), a refusal before any request read (re "")
// answering the one waiting request, and a request still waiting when the scope closes failed
// `unavailable` at once rather than at its timeout.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Logger, Scope } from "effect"
import { PassThrough } from "node:stream"
import { streamConnection } from "../../src/bind/yea-stream/client.js"

/** A client on two pipes; `frames` collects what it wrote, `reply` writes to it. */
const pipes = () => {
  const toClient = new PassThrough()
  const fromClient = new PassThrough()
  const written: Array<Record<string, unknown>> = []
  fromClient.on("data", (b: Buffer) => {
    for (const line of b.toString("utf8").split("\n")) if (line !== "") written.push(JSON.parse(line))
  })
  const reply = (frame: Record<string, unknown>) => Effect.sync(() => void toClient.write(JSON.stringify(frame) + "\n"))
  return { toClient, fromClient, written, reply }
}

/** Waits until the client has written `n` frames (pipes deliver on later ticks). */
const sent = (written: ReadonlyArray<unknown>, n: number) =>
  Effect.gen(function*() {
    while (written.length < n) yield* Effect.sleep("1 millis")
  })

describe("YEA stream client", () => {
  it.scopedLive("routes final replies by re, in any order", () =>
    Effect.gen(function*() {
      const p = pipes()
      const conn = yield* streamConnection(p.toClient, p.fromClient, () => undefined, { timeoutMs: 30_000 })
      const a = yield* Effect.fork(conn.request({ yea: 1, id: "a", verb: "HELLO" }, () => Effect.void))
      const b = yield* Effect.fork(conn.request({ yea: 1, id: "b", verb: "HELLO" }, () => Effect.void))
      yield* sent(p.written, 2)
      yield* p.reply({ yea: 1, re: "nobody", kind: "BRIEF" })
      yield* p.reply({ yea: 1, re: "b", kind: "BRIEF", n: 2 })
      yield* p.reply({ yea: 1, re: "a", kind: "BRIEF", n: 1 })
      expect(yield* Fiber.join(a)).toMatchObject({ re: "a", n: 1 })
      expect(yield* Fiber.join(b)).toMatchObject({ re: "b", n: 2 })
    }))

  it.live("runs EVENT callbacks on the connection's runtime, with the caller's logger", () => {
    const logged: Array<unknown> = []
    const capture = Logger.make(({ message }) => void logged.push(message))
    return Effect.gen(function*() {
      const p = pipes()
      const conn = yield* streamConnection(p.toClient, p.fromClient, () => undefined, { timeoutMs: 30_000 })
      const r = yield* Effect.fork(conn.request({ yea: 1, id: "e", verb: "ASK" }, (ev) => Effect.log(`event ${(ev as { n: number }).n}`)))
      yield* sent(p.written, 1)
      yield* p.reply({ yea: 1, re: "e", kind: "EVENT", n: 1 })
      yield* p.reply({ yea: 1, re: "e", kind: "EVENT", n: 2 })
      yield* p.reply({ yea: 1, re: "e", kind: "RESULT" })
      expect(yield* Fiber.join(r)).toMatchObject({ kind: "RESULT" })
      while (logged.length < 2) yield* Effect.sleep("1 millis")
      expect(logged.flat()).toEqual(["event 1", "event 2"])
    }).pipe(Effect.scoped, Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
  })

  it.scopedLive("a refusal before any request was read answers the one waiting request", () =>
    Effect.gen(function*() {
      const p = pipes()
      const conn = yield* streamConnection(p.toClient, p.fromClient, () => undefined, { timeoutMs: 30_000 })
      const r = yield* Effect.fork(conn.request({ yea: 1, id: "x", verb: "HELLO" }, () => Effect.void))
      yield* sent(p.written, 1)
      yield* p.reply({ yea: 1, re: "", kind: "ERROR", code: "rate_limited" })
      expect(yield* Fiber.join(r)).toMatchObject({ kind: "ERROR", code: "rate_limited" })
    }))

  it.live("closing the scope fails a waiting request unavailable, and later requests too", () =>
    Effect.gen(function*() {
      const p = pipes()
      const scope = yield* Scope.make()
      // A timeout far beyond the test's own: the failure must come from the close.
      const conn = yield* Scope.extend(streamConnection(p.toClient, p.fromClient, () => undefined, { timeoutMs: 3_600_000 }), scope)
      const r = yield* Effect.fork(Effect.either(conn.request({ yea: 1, id: "w", verb: "HELLO" }, () => Effect.void)))
      yield* sent(p.written, 1)
      yield* Scope.close(scope, Exit.void)
      const result = yield* Fiber.join(r)
      expect(Either.isLeft(result) && result.left.reason).toBe("unavailable")
      const later = yield* Effect.either(conn.request({ yea: 1, id: "l", verb: "HELLO" }, () => Effect.void))
      expect(Either.isLeft(later) && later.left.reason).toBe("unavailable")
    }))

  it.scopedLive("the peer closing its end fails every waiting request unavailable", () =>
    Effect.gen(function*() {
      const p = pipes()
      const conn = yield* streamConnection(p.toClient, p.fromClient, () => undefined, { timeoutMs: 3_600_000 })
      const a = yield* Effect.fork(Effect.either(conn.request({ yea: 1, id: "a", verb: "HELLO" }, () => Effect.void)))
      const b = yield* Effect.fork(Effect.either(conn.request({ yea: 1, id: "b", verb: "HELLO" }, () => Effect.void)))
      yield* sent(p.written, 2)
      p.toClient.destroy()
      for (const f of [a, b]) {
        const result = yield* Fiber.join(f)
        expect(Either.isLeft(result) && result.left.reason).toBe("unavailable")
      }
    }))
})
