// A worker process for the concurrency proof (concurrency.test.ts): opens the shared ledger store,
// makes a guard with one USD budget, and runs `n` guarded actions, 64 in flight at a time; prints `progress K`
// every 100 settled actions and a JSON tally at the end. `recover: true` first settles what an
// earlier process with the same owner left held (after a SIGKILL).
// Run: node --import tsx test/ledger/worker.ts (the tests run it bundled, processes.ts) '<json args>'
import { Effect } from "effect"
import { openLedger, parseLocation } from "../../src/cli/ledger-open.js"
import { type Cost, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"

interface Args {
  readonly where: string
  readonly owner: string
  readonly n: number
  readonly budget: string
  readonly recover?: boolean
  /** First action index (a restarted worker continues with new ids). */
  readonly from?: number
  /** Actions in flight at once in this process (all 4 processes together: 4 times this). */
  readonly concurrency?: number
  /** Every action whose index is a multiple of this really costs three times its estimate. */
  readonly overEvery?: number
}

const args = JSON.parse(process.argv[2]) as Args

const cents = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}` as Usd
const cost = (c: number): Cost => ({ tokens: c * 10, usd: cents(c), latency_ms: 1, risk: 0 })
class Flaky { readonly _tag = "Flaky" }

const program = Effect.gen(function*() {
  const guard = yield* makeGuard({ mode: "enforce", policy: usdBudget(args.budget as Usd), namespace: "proof", runId: `run-${args.owner}`, owner: args.owner })
  const recovered = args.recover === true ? yield* guard.recover : 0
  let settled = 0
  const from = args.from ?? 0
  const tally = { ok: 0, denied: 0, failed: 0, recovered, other: [] as Array<string> }
  yield* Effect.forEach(Array.from({ length: args.n }, (_, k) => from + k), (i) => {
    // Estimates of 1 to 9 cents; every fifth action costs half its estimate, every thirteenth
    // fails after a measured spend of one cent.
    const e = 1 + ((i * 7) % 9)
    const run = Effect.gen(function*() {
      yield* Effect.sleep(`${i % 3} millis`)
      if (i % 13 === 0) return yield* Effect.fail(new Flaky())
      if (args.overEvery !== undefined && i % args.overEvery === 0) return { value: i, actual: cost(3 * e) }
      return { value: i, actual: cost(i % 5 === 0 ? Math.ceil(e / 2) : e) }
    })
    return guard.guard({ id: `${args.owner}-${i}`, kind: "llm", metadata: { i }, estimate: cost(e) }, run, { failureSpend: () => cost(1) }).pipe(
      Effect.matchEffect({
        onSuccess: () => Effect.sync(() => void tally.ok++),
        onFailure: (err) => Effect.sync(() => {
          if (err._tag === "ActionDenied") tally.denied++
          else if (err._tag === "Flaky") tally.failed++
          else tally.other.push(`${err._tag}: ${"message" in err ? err.message : ""}`)
        })
      }),
      Effect.tap(() => Effect.sync(() => {
        if (++settled % 100 === 0) process.stdout.write(`progress ${settled}\n`)
      }))
    )
  }, { concurrency: args.concurrency ?? 64, discard: true })
  process.stdout.write(JSON.stringify(tally) + "\n")
})

Effect.runPromise(Effect.provide(program, openLedger(parseLocation(args.where), { ledger: "proof", synchronous: "normal", maxConnections: 4 }))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(String(e) + "\n")
    process.exit(1)
  }
)
