// The three-agent demo (spec Appendix A; issue 3 item 7). A is this process; B (booking) and C
// (payment) are `mandate writ serve` processes on loopback, each with its own key and SQLite store.
//
//  1. discovery: A reads B's /.well-known/writ (Appendix B)
//  2. A issues writ_1 to B: travel, at most 60000 per call, one use, USD, refundable, a date window
//  3. A calls B `travel/book`; B delegates the charge to C (writ_2) over HTTP and reports C's tally
//  4. A checks the whole tally tree offline (section 6.2) with nothing but writ_1 and its call
//  5. A reverses C's charge directly with `sys/undo` (section 8.1); repeating it is safe
//  6. seven things A (or a dishonest B) may not do, each refused with its reason: a signed refusal
//     (section 7 steps 3 to 10, or a failed `sys/undo` check, section 8.1), or an unsigned error
//     where section 7 steps 1 and 2 say so (shown separately)
//  7. a revoke cancels work in flight at B, is forwarded to C, and both acks come back (`fwd`)
//  8. A recovers tallies through `sys/tallies` (section 8.2), from B and directly from C
//  9. the audit records of B and C (section 9.3) hold every refusal
//
// Every object exchanged goes to out/, the transcript to out/transcript.txt. Every expectation is
// checked; the demo fails (exit 1) when one does not hold. The executors use their real clocks;
// the expired case uses a writ whose `exp` is already past, so nothing sleeps.
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Either, Fiber, Layer, Option } from "effect"
import { createServer } from "node:net"
import { resolve } from "node:path"
import { fetchWellKnown, postWrit } from "../../bind/writ-http/client.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { RandomBytes, Signer } from "../../kernel/services.js"
import * as Writ from "../../writ/index.js"
import { checkCallAnswer, checkRevokeAnswer, drawTree } from "../writ-check.js"
import { type CliError, cliError, didOfSeed, writeKeyFile } from "../writ-io.js"
import { auditLine, readAudit } from "../writ-audit.js"
import { freshId, signAnything } from "./forge.js"
import { repoRoot, startExecutor } from "./procs.js"
import { Transcript } from "./transcript.js"
import { unixSeconds } from "../../kernel/clock.js"

export interface DemoOptions {
  /** Where everything is written (default `out`, gitignored). */
  readonly out: string
  /** C's handler module, to run the demo against another payment application (default payment.ts). */
  readonly cHandler?: string
}


const freePort = Effect.async<number>((resume) => {
  const s = createServer()
  s.listen(0, "127.0.0.1", () => {
    const a = s.address()
    const port = typeof a === "object" && a !== null ? a.port : 0
    s.close(() => resume(Effect.succeed(port)))
  })
})

/** Removes what a previous run left in the output folder (only the demo's own kinds of file). */
const prepareOut = (out: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (yield* fs.exists(out)) {
      for (const f of yield* fs.readDirectory(out)) {
        if (/\.(json|jsonl|txt|sqlite|sqlite-wal|sqlite-shm)$/.test(f) || f === "keys" || f === "signals") {
          yield* fs.remove(`${out}/${f}`, { recursive: true })
        }
      }
    }
    yield* fs.makeDirectory(`${out}/keys`, { recursive: true })
    yield* fs.makeDirectory(`${out}/signals`, { recursive: true })
  }).pipe(Effect.mapError((e) => cliError("mandate/unwritable", String(e), out)))

const str = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))
const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {})
const reasonOf = (tally: JsonObject): string | null => (isJsonObject(tally.err) && typeof tally.err.code === "string" ? tally.err.code : null)

export const runDemo = (options: DemoOptions): Effect.Effect<boolean, CliError, FileSystem.FileSystem | RandomBytes> =>
  Effect.gen(function*() {
    const out = resolve(options.out)
    yield* prepareOut(out)
    const t = new Transcript(out)
    // Interrupted (Ctrl-C): the scope still stops both executors; the transcript so far is kept.
    const result = yield* Effect.either(Effect.scoped(demo(t, out, options.cHandler))).pipe(Effect.onInterrupt(() => t.finish()))
    if (Either.isLeft(result)) {
      t.failures.push(`the demo stopped: ${result.left.message}`)
      yield* t.log(`  FAIL the demo stopped: ${result.left.reason}: ${result.left.message}`)
    }
    // The audit records (section 9.3), read after both executors have stopped.
    if (Either.isRight(result)) yield* audits(t, out)
    yield* t.log("")
    yield* t.log(`${t.checks} expectations checked, ${t.failures.length} failed`)
    for (const f of t.failures) yield* t.log(`  failed: ${f}`)
    yield* t.log(t.failures.length === 0 ? "demo: every expectation held" : "demo: FAILED")
    yield* t.finish()
    return t.failures.length === 0
  })

const demo = (t: Transcript, out: string, cHandler?: string) =>
  Effect.gen(function*() {
    // Keys: one per agent, in key files readable by their owner only.
    const random = yield* RandomBytes
    const seeds = { a: yield* random.bytes(32), b: yield* random.bytes(32), c: yield* random.bytes(32) }
    for (const [n, s] of Object.entries(seeds)) yield* writeKeyFile(`${out}/keys/${n}.key`, s)
    const A = didOfSeed(seeds.a)
    const B = didOfSeed(seeds.b)
    const C = didOfSeed(seeds.c)
    const keysOf = (seed: Uint8Array) => Layer.merge(Signer.fromSeed(seed), RandomBytes.live)
    const asA = <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) => Effect.provide(e, keysOf(seeds.a))
    const asB = <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) => Effect.provide(e, keysOf(seeds.b))

    yield* t.step("Setup: three agents, three keys, two executors on loopback")
    yield* t.log(`  A (delegator) ${A}`)
    yield* t.log(`  B (booking)   ${B}`)
    yield* t.log(`  C (payment)   ${C}`)
    const cPort = yield* freePort
    const handler = (n: string) => resolve(repoRoot, "src/cli/demo", n)
    const [cx, bx] = yield* Effect.all([
      startExecutor({
        name: "C", key: `${out}/keys/c.key`, store: `${out}/c.sqlite`, handler: cHandler === undefined ? handler("payment.ts") : resolve(cHandler), roots: [A],
        act: ["travel/charge"], port: cPort, env: { MANDATE_DEMO_SIGNAL_DIR: `${out}/signals` }
      }),
      startExecutor({
        name: "B", key: `${out}/keys/b.key`, store: `${out}/b.sqlite`, handler: handler("booking.ts"), roots: [A],
        act: ["travel"], forward: { [C]: `http://127.0.0.1:${cPort}/writ` },
        env: { MANDATE_DEMO_KEY: `${out}/keys/b.key`, MANDATE_DEMO_C_URL: `http://127.0.0.1:${cPort}/writ`, MANDATE_DEMO_C_DID: C }
      })
    ], { concurrency: 2 }).pipe(Effect.mapError((e) => cliError("mandate/demo_process", e.message)))
    yield* t.log(`  B listens at ${bx.url} (pid ${bx.pid}), store out/b.sqlite`)
    yield* t.log(`  C listens at ${cx.url} (pid ${cx.pid}), store out/c.sqlite`)
    yield* t.expect("each executor runs under the key it was given", bx.did === B && cx.did === C)

    /** POSTs an object, saving it and the answer. */
    const post = (to: { url: string }, name: string, body: JsonObject) =>
      Effect.gen(function*() {
        yield* t.save(name, body)
        const a = yield* postWrit(to.url, body, { timeout: Duration.seconds(60) }).pipe(
          Effect.mapError((e) => cliError("mandate/unreachable", e.message, to.url))
        )
        const json = Option.getOrElse(a.json, () => ({ unparsed: new TextDecoder().decode(a.bytes) }) as Json)
        yield* t.save(`${name}-answer`, json)
        return { status: a.status, json, bytes: a.bytes }
      })

    /** A refusal: the answer is a `failed` tally naming `reason`, signed by the executor that received the call. */
    const expectSignedRefusal = (label: string, call: JsonObject, answer: { status: number; json: Json }, reason: string, signer: string) =>
      Effect.gen(function*() {
        const tally = obj(obj(answer.json).tally)
        const sig = yield* Effect.either(Writ.verifyTallyObject(tally, signer))
        const ok = answer.status === 200 && tally.st === "failed" && reasonOf(tally) === reason && Either.isRight(sig) &&
          tally.call === Writ.identity(call)
        yield* t.expect(
          `${label}: signed refusal, st failed, reason ${reason}`,
          ok,
          ok ? `signed by ${signer === B ? "B" : signer === C ? "C" : signer}, names this call` : `got status ${answer.status}, ${str(answer.json).slice(0, 160)}`
        )
      })

    // ---------------------------------------------------------------------------------------
    yield* t.step("1. Discovery: A reads B's well-known document (Appendix B)")
    const wk = yield* fetchWellKnown(new URL(bx.url).origin).pipe(Effect.mapError((e) => cliError("mandate/unreachable", e.message)))
    yield* t.save("well-known-B", wk)
    yield* t.expect("B's document names B's key", obj(wk).did === B)

    // ---------------------------------------------------------------------------------------
    yield* t.step("2. A issues writ_1 to B (section 2)")
    const now0 = yield* unixSeconds
    const bookingBounds: Writ.Bounds = {
      act: { t: "prefix", v: "travel" },
      amount: { t: "max", v: 60000 },
      currency: { t: "set", v: ["USD"] },
      uses: { t: "count", v: 1 },
      fare: { t: "set", v: ["refundable"] },
      date: { t: "window", v: [20261015, 20261019] }
    }
    const w1 = yield* asA(Writ.issueRoot({ hld: B, bnd: bookingBounds, exp: now0 + 3600 }))
    yield* t.log(`  writ_1 ${w1.id}: act travel, amount <= 60000 per call, uses 1, USD, refundable, dates 20261015..20261019`)
    yield* t.save("writ_1", w1.writ as unknown as Json)
    const bookArgs = { amount: 58900, currency: "USD", fare: "refundable", date: 20261015, pnr: "K7Q2ZD" }

    // ---------------------------------------------------------------------------------------
    yield* t.step("3. A calls B travel/book; B delegates the charge to C")
    const call1 = yield* asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: bookArgs }))
    const a1 = yield* post(bx, "call-A-B-book", call1.call.json)
    const tallyB = obj(obj(a1.json).tally)
    const resB = obj(a1.json).res
    yield* t.expect("B answers with an ok tally", a1.status === 200 && tallyB.st === "ok", `st ${str(tallyB.st)} ${str(reasonOf(tallyB))}`)
    const wrt = Array.isArray(tallyB.wrt) ? (tallyB.wrt as ReadonlyArray<JsonObject>) : []
    const sub = Array.isArray(tallyB.sub) ? (tallyB.sub as ReadonlyArray<JsonObject>) : []
    const writ2 = wrt[0] ?? {}
    const tallyC = sub[0] ?? {}
    yield* t.expect("B's tally lists writ_2 in wrt (B -> C, a child of writ_1)", wrt.length === 1 && writ2.iss === B && writ2.hld === C && writ2.prv === w1.id)
    yield* t.expect("B's tally embeds C's tally in sub", sub.length === 1 && tallyC.writ === Writ.identity(writ2) && tallyC.st === "ok")
    yield* t.save("writ_2-from-B-wrt", writ2)
    yield* t.save("tally_C-from-B-sub", tallyC)

    // ---------------------------------------------------------------------------------------
    yield* t.step("4. A checks the whole tally tree offline (section 6.2)")
    const ctx1 = { callId: call1.call.id, op: "travel/book", chain: call1.chain }
    const tree = yield* Writ.verifyTallyTree(tallyB, ctx1, resB === undefined ? undefined : { value: resB })
    for (const line of yield* drawTree(tallyB, call1.call.json, resB)) yield* t.log(`  ${line}`)
    yield* t.expect("the tree is valid with nothing but writ_1, A's call and the keys inside", tree.verdict === "valid", tree.verdict === "valid" ? "" : `${tree.verdict}: ${tree.error.reason} ${tree.error.message}`)
    const subSig = yield* Effect.either(Writ.verifyTallyObject(tallyC, C))
    yield* t.expect("C's tally is signed by C, the holder of writ_2", Either.isRight(subSig))
    yield* t.expect(
      "used counts the charge once at each level: 58900 at B and at C",
      obj(tallyB.used).amount === 58900 && obj(tallyC.used).amount === 58900
    )

    // ---------------------------------------------------------------------------------------
    yield* t.step("5. A reverses C's charge directly with sys/undo (section 8.1)")
    const undoChain = [w1.writ as unknown as JsonObject, writ2]
    const undo = yield* asA(Writ.makeCall({ chain: undoChain, op: "sys/undo", args: { tally: tallyC } }))
    const u1 = yield* post(cx, "call-A-C-undo", undo.call.json)
    const uv = yield* checkCallAnswer(undo.call.json, u1.json)
    yield* t.expect("C reverses the charge: ok, and the undo tally verifies", uv._tag === "tally" && uv.st === "ok" && uv.verdict === "valid", uv._tag === "tally" ? `${uv.st} ${uv.verdict}` : uv._tag)
    const u2 = yield* post(cx, "call-A-C-undo-retry", undo.call.json)
    yield* t.expect("the same signed undo again: answered from the store, byte for byte", Buffer.from(u1.bytes).equals(Buffer.from(u2.bytes)))
    const undoAgain = yield* asA(Writ.makeCall({ chain: undoChain, op: "sys/undo", args: { tally: tallyC } }))
    const u3 = yield* post(cx, "call-A-C-undo-again", undoAgain.call.json)
    const t3 = obj(obj(u3.json).tally)
    yield* t.expect(
      "a new undo of the same charge performs nothing: ok with the first reversal's body",
      t3.st === "ok" && JSON.stringify(obj(u3.json).res) === JSON.stringify(obj(u1.json).res)
    )

    // ---------------------------------------------------------------------------------------
    yield* t.step("6. Seven things that are not allowed")
    // 6.1 Widen a slip.
    yield* t.log("  6.1 widen a slip: B tries to give C more than B holds (amount 65000 > 60000)")
    const heldB = yield* asB(Writ.holdChain(w1.chain))
    const widened = yield* Effect.either(asB(Writ.delegate(heldB, { hld: C, bnd: { amount: { t: "max", v: 65000 } } })))
    yield* t.expect(
      "the issuing API refuses to sign it: not_narrowed (nothing signed)",
      Either.isLeft(widened) && widened.left.reason === "not_narrowed"
    )
    const forgedWrit = yield* asB(Effect.gen(function*() {
      return yield* signAnything("writ", {
        v: 1, typ: "writ", iss: B, hld: C,
        bnd: { ...(bookingBounds as unknown as JsonObject), act: { t: "prefix", v: "travel/charge" }, amount: { t: "max", v: 65000 } },
        prv: w1.id, exp: w1.writ.exp, nnc: yield* freshId
      })
    }))
    const widenCall = yield* asB(Effect.gen(function*() {
      return yield* signAnything("call", {
        v: 1, typ: "call", id: yield* freshId, chain: [w1.writ as unknown as JsonObject, forgedWrit], from: B,
        op: "travel/charge", args: { ...bookArgs, amount: 64000 }
      })
    }))
    const r61 = yield* post(cx, "refuse-widen", widenCall)
    yield* expectSignedRefusal("a dishonest B signs the wider writ itself and calls C; C", widenCall, r61, "not_narrowed", C)

    // 6.2 Overcharge.
    yield* t.log("  6.2 overcharge: A asks B to book 61000 under writ_1 (max 60000)")
    const local = yield* Effect.either(asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: { ...bookArgs, amount: 61000 } })))
    yield* t.expect("A's own issuing API refuses to sign it: out_of_bounds", Either.isLeft(local) && local.left.reason === "out_of_bounds")
    const overCall = yield* asA(Effect.gen(function*() {
      return yield* signAnything("call", {
        v: 1, typ: "call", id: yield* freshId, chain: w1.chain as unknown as Json, from: A, op: "travel/book", args: { ...bookArgs, amount: 61000 }
      })
    }))
    const r62 = yield* post(bx, "refuse-overcharge", overCall)
    yield* expectSignedRefusal("signed anyway and sent; B", overCall, r62, "out_of_bounds", B)

    // 6.3 Charge twice.
    yield* t.log("  6.3 charge twice: B sends C a second charge under writ_2 (uses 1)")
    const twice = yield* asB(Writ.makeCall({ chain: undoChain, op: "travel/charge", args: bookArgs }))
    const r63 = yield* post(cx, "refuse-charge-twice", twice.call.json)
    yield* expectSignedRefusal("C", twice.call.json, r63, "count_exhausted", C)
    const again = yield* asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: bookArgs }))
    const r63b = yield* post(bx, "refuse-book-twice", again.call.json)
    yield* expectSignedRefusal("and A's second booking under writ_1 (uses 1); B", again.call.json, r63b, "count_exhausted", B)

    // 6.4 Fake a receipt.
    yield* t.log("  6.4 fake a receipt: B rewrites C's tally (used 1), signs it itself, and re-signs its own tally around it")
    const forgedTally = yield* asB(signAnything("tally", { ...Writ.withoutSig(tallyC), used: { amount: 1 } }))
    yield* t.save("forged-tally-C", forgedTally)
    // B re-signs its own tally around the doctored receipt, so B's signature holds and the
    // forgery is caught at C's hop: a signed admission by B (section 6.2, signed_unauthorized).
    const doctored = yield* asB(signAnything("tally", { ...Writ.withoutSig(tallyB), sub: [forgedTally] }))
    yield* t.save("forged-tally-B", doctored)
    const offline = yield* Writ.verifyTallyTree(doctored, ctx1, resB === undefined ? undefined : { value: resB })
    for (const line of yield* drawTree(doctored, call1.call.json, resB)) yield* t.log(`  ${line}`)
    yield* t.expect(
      "offline, A finds it: signed_unauthorized, bad_signature at C's hop (sub[0])",
      offline.verdict === "signed_unauthorized" && offline.error.reason === "bad_signature" && (offline.error.path ?? "").startsWith("sub[0]"),
      offline.verdict === "valid" ? "valid?" : `${offline.verdict}: ${offline.error.reason} at ${offline.error.path ?? ""}`
    )
    const fakeUndo = yield* asA(Writ.makeCall({ chain: undoChain, op: "sys/undo", args: { tally: forgedTally } }))
    const r64 = yield* post(cx, "refuse-fake-receipt", fakeUndo.call.json)
    yield* expectSignedRefusal("A asks C to reverse the fake receipt; C (its own signature is missing)", fakeUndo.call.json, r64, "not_reversible", C)

    // 6.5 Call the wrong executor.
    yield* t.log("  6.5 call the wrong executor: A sends a booking under writ_1 (held by B) to C")
    const wrongCall = yield* asA(Writ.makeCall({ chain: w1.chain, op: "travel/book", args: bookArgs }))
    const r65 = yield* post(cx, "refuse-wrong-executor", wrongCall.call.json)
    yield* expectSignedRefusal("C, signing as the party that received it", wrongCall.call.json, r65, "wrong_executor", C)

    // 6.6 An expired writ.
    yield* t.log("  6.6 use an expired writ: writ_e expired ten seconds ago")
    const nowE = yield* unixSeconds
    const we = yield* asA(Writ.issueRoot({ hld: B, bnd: bookingBounds, exp: nowE - 10 }))
    yield* t.save("writ_e", we.writ as unknown as Json)
    const expCall = yield* asA(Writ.makeCall({ chain: we.chain, op: "travel/book", args: bookArgs }))
    const r66 = yield* post(bx, "refuse-expired", expCall.call.json)
    yield* expectSignedRefusal("B", expCall.call.json, r66, "expired", B)

    // 6.7 A revoked writ.
    yield* t.log("  6.7 use a revoked writ: A revokes writ_r at B, then calls under it")
    const wr = yield* asA(Writ.issueRoot({ hld: B, bnd: bookingBounds, exp: nowE + 600 }))
    yield* t.save("writ_r", wr.writ as unknown as Json)
    const rvk = yield* asA(Writ.makeRevoke({ chain: wr.chain }))
    const rr = yield* post(bx, "revoke-writ_r", rvk.revoke.json)
    const rrv = yield* checkRevokeAnswer(rvk.revoke.json, rr.json)
    yield* t.expect("B records the revoke and answers with its signed ack", rrv.error === undefined && rrv.own?.ok === true && rrv.own.iss === B)
    const revCall = yield* asA(Writ.makeCall({ chain: wr.chain, op: "travel/book", args: bookArgs }))
    const r67 = yield* post(bx, "refuse-revoked", revCall.call.json)
    yield* expectSignedRefusal("B", revCall.call.json, r67, "revoked", B)

    // Section 7 steps 1 and 2: refusals before the call's signature verified are unsigned.
    yield* t.log("  and where section 7 steps 1-2 apply, the refusal is an unsigned error:")
    const tampered = { ...call1.call.json, args: { ...bookArgs, amount: 100 } }
    const r68 = yield* post(bx, "refuse-tampered", tampered)
    yield* t.expect(
      "a call altered after signing: status 400, unsigned error bad_signature (section 7 step 2)",
      r68.status === 400 && obj(r68.json).error === "bad_signature" && obj(r68.json).tally === undefined,
      `status ${r68.status} ${str(r68.json).slice(0, 80)}`
    )

    // ---------------------------------------------------------------------------------------
    yield* t.step("7. A revoke cancels work in flight at B, is forwarded to C, and the acks come back")
    const w3 = yield* asA(Writ.issueRoot({ hld: B, bnd: bookingBounds, exp: nowE + 600 }))
    yield* t.save("writ_3", w3.writ as unknown as Json)
    const slowCall = yield* asA(Writ.makeCall({ chain: w3.chain, op: "travel/book", args: { ...bookArgs, hold: true } }))
    yield* t.log(`  A calls B under writ_3 (call ${slowCall.call.id}); C's charge stays in flight`)
    const inflight = yield* Effect.fork(post(bx, "call-A-B-inflight", slowCall.call.json))
    const fs = yield* FileSystem.FileSystem
    const held = yield* Effect.gen(function*() {
      for (let i = 0; i < 200; i++) {
        const files = yield* Effect.orElseSucceed(fs.readDirectory(`${out}/signals`), () => [] as Array<string>)
        if (files.some((f) => f.startsWith("held-"))) return true
        yield* Effect.sleep(Duration.millis(100))
      }
      return false
    })
    yield* t.expect("C's charge under writ_4 (B -> C) is running", held)
    const rv3 = yield* asA(Writ.makeRevoke({ chain: w3.chain }))
    const ra = yield* post(bx, "revoke-writ_3", rv3.revoke.json)
    const rav = yield* checkRevokeAnswer(rv3.revoke.json, ra.json)
    const tallies3 = rav.tallies
    yield* t.expect(
      "B answers with the tally of the call it held open (pending or final)",
      tallies3.length === 1 && tallies3[0].ok && tallies3[0].tally.call === slowCall.call.id,
      tallies3.map((x) => `${str(x.tally.st)}`).join(",")
    )
    const ownBody = obj(rav.own?.res)
    yield* t.expect("B's ack verifies and its body lists the open call", rav.own?.ok === true && Array.isArray(ownBody.open) && ownBody.open.includes(slowCall.call.id))
    const fwdC = rav.fwd.find((f) => f.iss === C)
    yield* t.expect("B forwarded the revoke to C: C's ack comes back in fwd and verifies", rav.fwd.length === 1 && fwdC !== undefined && fwdC.ok)
    yield* t.expect(
      "C's ack lists B's charge as open work it was told to stop",
      fwdC !== undefined && Array.isArray(obj(fwdC.res).open) && (obj(fwdC.res).open as ReadonlyArray<Json>).length === 1
    )
    const slow = yield* Fiber.join(inflight)
    const slowTally = obj(obj(slow.json).tally)
    const slowSub = Array.isArray(slowTally.sub) ? (slowTally.sub as ReadonlyArray<JsonObject>) : []
    yield* t.expect("A's in-flight call ends canceled", slowTally.st === "canceled", `st ${str(slowTally.st)}`)
    yield* t.expect("C's canceled tally is in B's sub", slowSub.length === 1 && slowSub[0].st === "canceled")
    const slowTree = yield* Writ.verifyTallyTree(slowTally, { callId: slowCall.call.id, op: "travel/book", chain: slowCall.chain })
    for (const line of yield* drawTree(slowTally, slowCall.call.json)) yield* t.log(`  ${line}`)
    yield* t.expect("the canceled tree verifies (section 6.2)", slowTree.verdict === "valid")
    const acked = yield* Effect.either(Writ.checkAck({
      revoke: rv3.revoke.json, ack: obj(rav.own?.ack), body: { value: rav.own?.res ?? null }, chain: w3.chain, tally: slowTally
    }))
    yield* t.expect("B's final tally is accounted for by B's ack (section 9.4)", Either.isRight(acked), Either.isLeft(acked) ? acked.left.reason : acked.right)

    // ---------------------------------------------------------------------------------------
    yield* t.step("8. A recovers tallies through sys/tallies (section 8.2)")
    const q1 = yield* asA(Writ.makeCall({ chain: w1.chain, op: "sys/tallies", args: { writ: w1.id } }))
    const s1 = yield* post(bx, "call-A-B-tallies", q1.call.json)
    const list1 = obj(obj(s1.json).res).tallies
    const ids1 = Array.isArray(list1) ? list1.map((x) => Writ.identity(obj(x))) : []
    const q1v = yield* checkCallAnswer(q1.call.json, s1.json)
    yield* t.expect("B returns a signed list under writ_1 that holds B's booking tally", q1v._tag === "tally" && q1v.verdict === "valid" && ids1.includes(Writ.identity(tallyB)), `${ids1.length} tallies`)
    const q2 = yield* asA(Writ.makeCall({ chain: undoChain, op: "sys/tallies", args: { writ: w1.id } }))
    const s2 = yield* post(cx, "call-A-C-tallies", q2.call.json)
    const list2 = obj(obj(s2.json).res).tallies
    const ids2 = Array.isArray(list2) ? list2.map((x) => Writ.identity(obj(x))) : []
    yield* t.expect("C, asked directly, returns C's charge tally without B's help", ids2.includes(Writ.identity(tallyC)), `${ids2.length} tallies`)
    return { B, C }
  })

const audits = (t: Transcript, out: string) =>
  Effect.gen(function*() {
    yield* t.step("9. The audit records (section 9.3): one entry per call or revoke, refusals included")
    const fs = yield* FileSystem.FileSystem
    const want: Record<string, ReadonlyArray<string>> = {
      B: ["out_of_bounds", "count_exhausted", "expired", "revoked", "bad_signature"],
      C: ["not_narrowed", "count_exhausted", "wrong_executor", "not_reversible"]
    }
    for (const name of ["B", "C"] as const) {
      const entries = yield* Effect.either(readAudit(`${out}/${name.toLowerCase()}.sqlite`))
      if (Either.isLeft(entries)) {
        yield* t.expect(`${name}'s audit record is readable`, false, entries.left.message)
        continue
      }
      yield* Effect.ignore(fs.writeFileString(`${out}/audit-${name}.jsonl`, entries.right.map((e) => JSON.stringify(e)).join("\n") + "\n"))
      yield* t.log(`  ${name}: ${entries.right.length} entries -> out/audit-${name}.jsonl`)
      for (const e of entries.right) yield* t.log(`    ${auditLine(e)}`)
      const reasons = new Set(entries.right.map((e) => e.reason))
      yield* t.expect(`${name}'s record holds the refusals ${want[name].join(", ")}`, want[name].every((r) => reasons.has(r)))
    }
  })
