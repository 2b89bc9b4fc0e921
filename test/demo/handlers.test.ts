// The demo's handler modules in process. C (payment): a charge reports what it consumed and a
// reversal window; held work stops when told to and says `canceled`; an undo refunds. B (booking):
// delegates by narrowing the writ it holds (section 7.5), records the child before sending it,
// and answers `failed` with `undeliverable` when C never answers (section 9.2).
import { Clock, Deferred, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { issueRoot, makeCall } from "../../src/writ/issue.js"
import { verifyChain } from "../../src/writ/chain.js"
import type { Operation } from "../../src/writ/executor/services.js"
import { application as booking } from "../../src/examples/booking.js"
import { application as payment, REVERSAL_WINDOW } from "../../src/examples/payment.js"

const seed = (n: number) => new Uint8Array(32).fill(n)
const did = (s: Uint8Array) => didKeyFromPublicKey(publicKeyFromSeed(s))
const A = seed(11)
const B = seed(12)
const C = seed(13)
const signedBy = (s: Uint8Array) => <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) =>
  Effect.provide(e, Layer.merge(Signer.fromSeed(s), RandomBytes.seeded(s)))
// Module-level fixture only: the root writ every test runs under.
const as = (s: Uint8Array) => <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) => Effect.runSync(signedBy(s)(e))

const dir = mkdtempSync(join(tmpdir(), "mandate-handlers-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const w1 = as(A)(issueRoot({
  hld: did(B),
  bnd: { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, uses: { t: "count", v: 1 } },
  exp: 2_000_000_000
}))

const operation = (over: Partial<Operation> & { args: JsonObject; op: string }) => Effect.gen(function* () {
  const stop = yield* Deferred.make<void>()
  const issued: Array<JsonObject> = []
  const subs: Array<JsonObject> = []
  const call = yield* signedBy(A)(makeCall({ chain: w1.chain, op: over.op, args: over.args }))
  const op: Operation = {
    kind: "forward",
    call: call.call.json,
    callId: call.call.id,
    acc: 1000,
    chain: w1.chain as unknown as ReadonlyArray<JsonObject>,
    target: Option.none(),
    stopSignal: Deferred.await(stop),
    stopRequested: Deferred.isDone(stop),
    recordIssued: (w) => Effect.sync(() => { issued.push(w) }),
    recordSub: (t) => Effect.sync(() => { subs.push(t); return true }),
    ...over
  }
  return { op, stop, issued, subs }
})

describe("C, the payment handler", () => {
  it.effect("charges: used is the amount, rev.until is acc plus the window, the body names the charge", () =>
    Effect.gen(function* () {
      const { op } = yield* operation({ op: "travel/charge", args: { amount: 58900, currency: "USD" } })
      const out = yield* payment.perform(op)
      expect(out).toMatchObject({ st: "ok", used: { amount: 58900 }, rev: 1000 + REVERSAL_WINDOW })
      expect(out.res).toMatchObject({ amount: 58900, currency: "USD" })
    }))

  // On the TestClock: the held work is still running after 10 s of clock time, and once told to
  // stop it ends without any clock time passing (at once), so nothing here depends on real time.
  // The forked fiber belongs to the test, so a failing assertion still interrupts it.
  it.effect("held work stops when told to and reports canceled, at once", () =>
    Effect.gen(function* () {
      const { op, stop } = yield* operation({ op: "travel/charge", args: { amount: 1, hold: true } })
      const fiber = yield* Effect.fork(payment.perform(op))
      yield* TestClock.adjust("10 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      const stoppedAt = yield* Clock.currentTimeMillis
      yield* Deferred.succeed(stop, undefined)
      const out = yield* Fiber.await(fiber)
      expect(yield* Clock.currentTimeMillis).toBe(stoppedAt)
      expect(out._tag === "Success" && out.value).toMatchObject({ st: "canceled", code: "revoked" })
    }))

  it.effect("an undo refunds the target tally", () =>
    Effect.gen(function* () {
      const { op } = yield* operation({ op: "sys/undo", args: {} })
      const out = yield* payment.perform({
        ...op, kind: "undo",
        target: Option.some({ tally: "T".repeat(43), call: "c", acc: 1, forward: true, chain: [], issuers: [], object: {}, res: Option.none() })
      })
      expect(out).toMatchObject({ st: "ok", res: { of: "T".repeat(43) } })
    }))
})

describe("B, the booking handler", () => {
  // Live clock: B really tries to reach C over loopback and must see it fail.
  it.live("narrows the writ it holds to a child for C, records it first, and answers undeliverable when C never answers", () =>
    Effect.gen(function* () {
      writeFileSync(join(dir, "b.key"), Buffer.from(B).toString("hex") + "\n", { mode: 0o600 })
      // A port nothing listens on.
      const port = yield* Effect.async<number>((resume) => {
        const s = createServer().listen(0, "127.0.0.1", () => {
          const a = s.address()
          s.close(() => resume(Effect.succeed(typeof a === "object" && a !== null ? a.port : 1)))
        })
      })
      process.env.MANDATE_DEMO_KEY = join(dir, "b.key")
      process.env.MANDATE_DEMO_C_URL = `http://127.0.0.1:${port}/writ`
      process.env.MANDATE_DEMO_C_DID = did(C)
      const { op, issued, subs } = yield* operation({ op: "travel/book", args: { amount: 500 } })
      const out = yield* booking.perform(op)
      expect(out).toEqual({ st: "failed", code: "undeliverable" })
      expect(subs).toEqual([])
      expect(issued).toHaveLength(1)
      const chain = yield* verifyChain([...w1.chain, issued[0]])
      const child = chain[1].value
      expect(child.iss).toBe(did(B))
      expect(child.hld).toBe(did(C))
      expect(child.bnd.act).toEqual({ t: "prefix", v: "travel/charge" })
      expect(child.bnd.amount).toEqual({ t: "max", v: 500 })
      expect(child.bnd.uses).toEqual({ t: "count", v: 1 })
    }))

  it.live("fails (an application code, not a crash) when it does not hold the writ it runs under", () =>
    Effect.gen(function* () {
      writeFileSync(join(dir, "x.key"), Buffer.from(C).toString("hex") + "\n", { mode: 0o600 })
      process.env.MANDATE_DEMO_KEY = join(dir, "x.key")
      const { op, issued } = yield* operation({ op: "travel/book", args: { amount: 5 } })
      expect(yield* booking.perform(op)).toEqual({ st: "failed", code: "demo/booking_error" })
      expect(issued).toEqual([])
    }))
})
