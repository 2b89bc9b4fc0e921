// One verdict for one object, whatever the command: a signed refusal (section 7 steps 3 to 10)
// gets the same verdict from `writ verify --call` (verifyAny) and `writ inspect --call`
// (drawTreeChecked) as from `writ send` (checkCallAnswer), all through writ-check.ts
// `verifyAnswerTally`. The refusal is a real one: an
// executor (memory stores) refuses a call that lacks a bounded argument (`missing_arg`, section
// 7.2). A refusal answering another call, or signed by a key that did not receive the call, is
// `unverifiable` from both.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { plainExecutor } from "../../src/app/plain-executor.js"
import { checkCallAnswer, drawTreeChecked, type CallVerdict, type Report, verifyAny } from "../../src/cli/writ-check.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { callAnswerJson, Executor } from "../../src/writ/executor/executor.js"
import { Application } from "../../src/writ/executor/services.js"
import { canonicalText } from "../../src/writ/sign.js"
import { Received } from "../../src/writ/verify.js"
import { act, call, key, ok, scripted, T0, writ } from "../writ-executor/fixtures.js"

const A = key(41)
const E = key(42)
const X = key(43)

const root = writ(A, E, { act: act("travel"), amount: { t: "max", v: 60000 } })

/** The executor's answer (section 10 JSON) to `c`. */
const answerTo = (c: JsonObject) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0 * 1000)
    const app = Layer.succeed(Application, scripted(() => Effect.succeed(ok())).service)
    const ctx = yield* Layer.build(plainExecutor({ seed: E.seed, application: app, roots: [A.did] }))
    const ex = yield* Effect.provide(Executor, ctx)
    const answer = yield* ex.call(new Received(canonicalText(c)))
    return JSON.parse(JSON.stringify(callAnswerJson(answer))) as JsonObject
  })

/** `writ verify TALLY --call CALL` on a tally file, as the command reads it (its bytes). */
const verifyCommand = (tally: JsonObject, c: JsonObject): Effect.Effect<Report> =>
  verifyAny(tally, new TextEncoder().encode(canonicalText(tally)), { call: c as Json })

const sendVerdict = (v: CallVerdict) => (v._tag === "tally" ? { verdict: v.verdict, reason: v.error?.reason } : { verdict: v._tag, reason: undefined })

describe("writ verify --call and writ send give a signed refusal one verdict", () => {
  it.scoped("a missing_arg refusal is valid from both", () =>
    Effect.gen(function*() {
      const c = call(A, [root], "travel/charge", { currency: "USD" })
      const answer = yield* answerTo(c)
      const tally = answer.tally as JsonObject
      expect(tally.st).toBe("failed")
      expect((tally.err as JsonObject).code).toBe("missing_arg")
      const sent = yield* checkCallAnswer(c, answer)
      const verified = yield* verifyCommand(tally, c)
      expect(sendVerdict(sent)).toEqual({ verdict: "valid", reason: undefined })
      expect({ verdict: verified.verdict, reason: verified.error?.reason }).toEqual({ verdict: "valid", reason: undefined })
      // The answer file itself (`writ verify answer.json --call call.json`) too, and `writ inspect`.
      expect((yield* verifyAny(answer, undefined, { call: c as Json })).verdict).toBe("valid")
      const drawn = yield* drawTreeChecked(tally, c)
      expect(drawn.verdict).toBe("valid")
      expect(drawn.lines[0]).toBe("tree: valid (a signed refusal: section 6.1 under the receiver, naming this call)")
      expect(drawn.lines[1]).toMatch(/travel\/charge\s+st failed \(missing_arg\).*\[signature ok\]$/)
    }))

  it.scoped("a refusal answering another call is unverifiable from both (tally_mismatch)", () =>
    Effect.gen(function*() {
      const c = call(A, [root], "travel/charge", { currency: "USD" })
      const other = call(A, [root], "travel/charge", { currency: "EUR" })
      const answer = yield* answerTo(c)
      const sent = sendVerdict(yield* checkCallAnswer(other, answer))
      const verified = yield* verifyCommand(answer.tally as JsonObject, other)
      expect(sent).toEqual({ verdict: "unverifiable", reason: "tally_mismatch" })
      expect({ verdict: verified.verdict, reason: verified.error?.reason }).toEqual(sent)
      expect((yield* drawTreeChecked(answer.tally as JsonObject, other)).verdict).toBe("unverifiable")
    }))

  it.scoped("a refusal signed by a key that did not receive the call is unverifiable from both (bad_signature)", () =>
    Effect.gen(function*() {
      const c = call(A, [root], "travel/charge", { currency: "USD" })
      const answer = yield* answerTo(c)
      const { sig: _sig, ...unsigned } = answer.tally as JsonObject
      const forged = X.sign("tally", unsigned)
      const sent = sendVerdict(yield* checkCallAnswer(c, { tally: forged }))
      const verified = yield* verifyCommand(forged, c)
      expect(sent.verdict).toBe("unverifiable")
      expect(sent.reason).toBe("bad_signature")
      expect({ verdict: verified.verdict, reason: verified.error?.reason }).toEqual(sent)
    }))
})
