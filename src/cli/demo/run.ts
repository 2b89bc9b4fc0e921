// The three-agent demo (spec Appendix A). A is this process; B (booking) and C
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
// One named function per act: stage.ts sets the stage, acts.ts holds acts 1-5 and 8,
// refusals.ts act 6, revoke-act.ts act 7, audit-act.ts act 9.
import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import { resolve } from "node:path"
import type { RandomBytes } from "../../kernel/services.js"
import type { CliError } from "../writ-io.js"
import { book, checkTreeOffline, discover, issueWrit1, recoverTallies, reverseCharge } from "./acts.js"
import { audits } from "./audit-act.js"
import { refusals } from "./refusals.js"
import { revokeInFlight } from "./revoke-act.js"
import { prepareOut, setUp } from "./stage.js"
import { Transcript } from "./transcript.js"

export interface DemoOptions {
  /** Where everything is written (default `out`, gitignored). */
  readonly out: string
  /** C's handler module, to run the demo against another payment application (default payment.ts). */
  readonly cHandler?: string
  /** A decision ledger (SQLite file or postgres://...#schema) B and C record their decisions in. */
  readonly ledger?: string
}

export const runDemo = (options: DemoOptions): Effect.Effect<boolean, CliError, FileSystem.FileSystem | RandomBytes> =>
  Effect.gen(function*() {
    const out = resolve(options.out)
    yield* prepareOut(out)
    const t = new Transcript(out)
    // Interrupted (Ctrl-C): the scope still stops both executors; the transcript so far is kept.
    const result = yield* Effect.either(Effect.scoped(demo(t, out, options.cHandler, options.ledger))).pipe(Effect.onInterrupt(() => t.finish()))
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

/** Acts 1 to 8, in order, with B and C running for the length of the scope. */
const demo = (t: Transcript, out: string, cHandler?: string, ledger?: string) =>
  Effect.gen(function*() {
    const s = yield* setUp(t, out, cHandler, ledger)
    yield* discover(s)
    const w1 = yield* issueWrit1(s)
    const booking = yield* book(s, w1)
    yield* checkTreeOffline(s, booking)
    yield* reverseCharge(s, booking)
    yield* refusals(s, w1, booking)
    yield* revokeInFlight(s)
    yield* recoverTallies(s, w1, booking)
    return { B: s.B, C: s.C }
  })
