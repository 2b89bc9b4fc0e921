// Bounds on what a server sends back (docs/mcp-gate.md "Bounds"), SDK Client -> mcp-proxy ->
// mcp-gate -> the plain fixture server: a result past the gate's bound is a signed
// `mcp-gate/result_too_large` tally (the tool ran and counted; the receipt is kept) and the session
// goes on; a verified result past the proxy's bound is refused `result_too_large` with its tally
// kept as a receipt; and a server flooding notifications to a client that does not read is cut to
// the proxy's queue (the rest dropped), after which the session still answers.
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { runProxy } from "../../src/bind/writ-mcp/proxy.js"
import { Receipts } from "../../src/bind/writ-mcp/receipts.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { agent, call, grant, statusOf } from "./support.js"
import { gateSession, plainServer, tempDir } from "./gate-support.js"

const anyTool = () => grant({ act: { t: "prefix", v: "mcp/tools/" }, uses: { t: "count", v: 10 } })
const codes = (rs: ReadonlyArray<JsonObject>) =>
  rs.map((r) => {
    const t = r.tally as { st: string; err?: { code: string } }
    return `${r.tool}:${t.err?.code ?? t.st}${r.res === undefined ? "" : "+res"}`
  })

/** The proxy's side toward a client that stops reading: while stalled, a send does not complete. */
class Stalled implements Transport {
  stalled = false
  private waiting: Array<() => void> = []
  /** What waits to be sent, for a test to tell when a message has got this far. */
  readonly held: Array<JSONRPCMessage> = []
  onmessage?: Transport["onmessage"]
  onclose?: () => void
  onerror?: (e: Error) => void
  constructor(private readonly inner: Transport) {}
  /** Wired at start, as a transport's callbacks are, so nothing arrives before the proxy listens. */
  start = () => {
    this.inner.onmessage = (m, extra) => this.onmessage?.(m, extra)
    this.inner.onclose = () => this.onclose?.()
    this.inner.onerror = (e) => this.onerror?.(e)
    return this.inner.start()
  }
  close = () => this.inner.close()
  send = async (m: JSONRPCMessage) => {
    if (this.stalled) {
      this.held.push(m)
      await new Promise<void>((r) => this.waiting.push(r))
    }
    return this.inner.send(m)
  }
  release = () => {
    this.stalled = false
    for (const r of this.waiting.splice(0)) r()
  }
}

describe("mcp-gate and mcp-proxy: bounded results and notifications", () => {
  it.live("a result past the gate's bound: a signed mcp-gate/result_too_large, counted and kept; the session goes on", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const s = yield* gateSession({ grant: yield* anyTool(), upstream: plainServer({ PLAIN_COUNTER: join(dir, "c") }), gate: { maxResultBytes: 100_000 } })
      expect(statusOf(yield* call(s.client, "big", { bytes: 200_000 }))).toBe("mcp-gate/result_too_large")
      expect(statusOf(yield* call(s.client, "count"))).toBe("ok")
      expect(codes(yield* s.receipts)).toEqual(["big:mcp-gate/result_too_large", "count:ok+res"])
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("a verified result past the proxy's bound: result_too_large, its tally kept; the session goes on", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const s = yield* gateSession({
        grant: yield* anyTool(),
        upstream: plainServer({ PLAIN_COUNTER: join(dir, "c") }),
        proxy: { maxResultBytes: 100_000 }
      })
      expect(statusOf(yield* call(s.client, "big", { bytes: 200_000 }))).toBe("result_too_large")
      expect(statusOf(yield* call(s.client, "big", { bytes: 1000 }))).toBe("ok")
      expect(codes(yield* s.receipts)).toEqual(["big:ok", "big:ok+res"])
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it.live("a notification flood to a client that does not read: at most the queue is relayed, then the session answers", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const flooded = join(dir, "flooded")
      const sent = 3000
      const [clientSide, proxySide] = InMemoryTransport.createLinkedPair()
      const toClient = new Stalled(proxySide)
      const kept = yield* Receipts.memory
      const proxy = yield* runProxy({
        client: toClient,
        server: plainServer({ PLAIN_FLOOD: String(sent), PLAIN_FLOODED: flooded, PLAIN_COUNTER: join(dir, "c") }),
        grant: yield* anyTool(),
        maxQueuedNotifications: 50,
        shutdownGrace: "20 seconds"
      }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(Signer.fromSeed(agent.seed), RandomBytes.live, kept.layer)), Effect.forkDaemon)
      const client = new Client({ name: "slow-reader", version: "0.1.0" }, { capabilities: { roots: { listChanged: true } } })
      let received = 0
      client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
        received++
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(clientSide, { timeout: 60_000 })),
        () => Effect.promise(() => client.close().catch(() => undefined)).pipe(Effect.zipRight(Fiber.await(proxy).pipe(Effect.timeout("30 seconds"), Effect.ignore)))
      )
      // The client stops reading; the server floods and says when it is done.
      toClient.stalled = true
      yield* Effect.promise(() => client.sendRootsListChanged())
      yield* Effect.sync(() => existsSync(flooded)).pipe(
        Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (done) => done }),
        Effect.timeout("60 seconds")
      )
      // The fixture has written the whole flood, but up to a pipe's worth of it may not have reached
      // the proxy yet. A call's answer travels the same ordered pipes behind it, so once that answer
      // waits at the stalled client, every notification of the flood has been admitted or dropped.
      const answered = Effect.runPromise(call(client, "count"))
      yield* Effect.sync(() => toClient.held.some((m) => "id" in m && ("result" in m || "error" in m))).pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (done) => done }),
        Effect.timeout("60 seconds")
      )
      toClient.release()
      yield* Effect.promise(() => answered)
      // The session still answers; what was relayed is the queue's worth, not the flood.
      yield* Effect.promise(() => client.ping())
      expect(received).toBeGreaterThan(0)
      expect(received).toBeLessThanOrEqual(51)
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
