// The demo's handler modules in process. C (payment): a charge reports what it consumed and a
// reversal window; held work stops when told to and says `canceled`; an undo refunds. B (booking):
// delegates by narrowing the writ it holds (section 7.5), records the child before sending it,
// and answers `failed` with `undeliverable` when C never answers (section 9.2).
import { Deferred, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { issueRoot, makeCall } from "../../src/writ/issue.js"
import { verifyChain } from "../../src/writ/chain.js"
import type { Operation } from "../../src/writ/executor/services.js"
import { application as booking } from "../../src/cli/demo/booking.js"
import { application as payment, REVERSAL_WINDOW } from "../../src/cli/demo/payment.js"

const seed = (n: number) => new Uint8Array(32).fill(n)
const did = (s: Uint8Array) => didKeyFromPublicKey(publicKeyFromSeed(s))
const A = seed(11)
const B = seed(12)
const C = seed(13)
const as = (s: Uint8Array) => <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) =>
  Effect.runSync(Effect.provide(e, Layer.merge(Signer.fromSeed(s), RandomBytes.seeded(s))))

const dir = mkdtempSync(join(tmpdir(), "mandate-handlers-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const w1 = as(A)(issueRoot({
  hld: did(B),
  bnd: { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 }, uses: { t: "count", v: 1 } },
  exp: 2_000_000_000
}))

const operation = async (over: Partial<Operation> & { args: JsonObject; op: string }) => {
  const stop = await Effect.runPromise(Deferred.make<void>())
  const issued: Array<JsonObject> = []
  const subs: Array<JsonObject> = []
  const call = as(A)(makeCall({ chain: w1.chain, op: over.op, args: over.args }))
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
}

describe("C, the payment handler", () => {
  it("charges: used is the amount, rev.until is acc plus the window, the body names the charge", async () => {
    const { op } = await operation({ op: "travel/charge", args: { amount: 58900, currency: "USD" } })
    const out = await Effect.runPromise(payment.perform(op))
    expect(out).toMatchObject({ st: "ok", used: { amount: 58900 }, rev: 1000 + REVERSAL_WINDOW })
    expect(out.res).toMatchObject({ amount: 58900, currency: "USD" })
  })

  it("held work stops when told to and reports canceled, at once", async () => {
    const { op, stop } = await operation({ op: "travel/charge", args: { amount: 1, hold: true } })
    const fiber = Effect.runFork(payment.perform(op))
    await new Promise((r) => setTimeout(r, 50))
    const started = Date.now()
    await Effect.runPromise(Deferred.succeed(stop, undefined))
    const out = await Effect.runPromise(fiber.await)
    expect(Date.now() - started).toBeLessThan(2000)
    expect(out._tag === "Success" && out.value).toMatchObject({ st: "canceled", code: "revoked" })
  })

  it("an undo refunds the target tally", async () => {
    const { op } = await operation({ op: "sys/undo", args: {} })
    const out = await Effect.runPromise(payment.perform({
      ...op, kind: "undo",
      target: Option.some({ tally: "T".repeat(43), call: "c", acc: 1, forward: true, chain: [], issuers: [], object: {}, res: Option.none() })
    }))
    expect(out).toMatchObject({ st: "ok", res: { of: "T".repeat(43) } })
  })
})

describe("B, the booking handler", () => {
  it("narrows the writ it holds to a child for C, records it first, and answers undeliverable when C never answers", async () => {
    writeFileSync(join(dir, "b.key"), Buffer.from(B).toString("hex") + "\n", { mode: 0o600 })
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const a = s.address()
        s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 1))
      })
    })
    process.env.MANDATE_DEMO_KEY = join(dir, "b.key")
    process.env.MANDATE_DEMO_C_URL = `http://127.0.0.1:${port}/writ`
    process.env.MANDATE_DEMO_C_DID = did(C)
    const { op, issued, subs } = await operation({ op: "travel/book", args: { amount: 500 } })
    const out = await Effect.runPromise(booking.perform(op))
    expect(out).toEqual({ st: "failed", code: "undeliverable" })
    expect(subs).toEqual([])
    expect(issued).toHaveLength(1)
    const chain = Effect.runSync(verifyChain([...w1.chain, issued[0]]))
    const child = chain[1].value
    expect(child.iss).toBe(did(B))
    expect(child.hld).toBe(did(C))
    expect(child.bnd.act).toEqual({ t: "prefix", v: "travel/charge" })
    expect(child.bnd.amount).toEqual({ t: "max", v: 500 })
    expect(child.bnd.uses).toEqual({ t: "count", v: 1 })
  })

  it("fails (an application code, not a crash) when it does not hold the writ it runs under", async () => {
    writeFileSync(join(dir, "x.key"), Buffer.from(C).toString("hex") + "\n", { mode: 0o600 })
    process.env.MANDATE_DEMO_KEY = join(dir, "x.key")
    const { op, issued } = await operation({ op: "travel/book", args: { amount: 5 } })
    expect(await Effect.runPromise(booking.perform(op))).toEqual({ st: "failed", code: "demo/booking_error" })
    expect(issued).toEqual([])
  })
})
