// The decision ledger as a library, in plain JavaScript: guarded actions under a USD budget, on the
// embedded SQLite store. Four summaries, each estimated at 0.30 USD, under a 1.00 USD budget: three
// run, the fourth is refused before it runs (`usd_budget_exhausted`), and the ledger's hash chain
// verifies. Run it from a project where `mandate` is installed:
//   node ledger-budget.mjs [LEDGER_FILE]        (default ledger-example.db, created when absent)
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { App, Ledger } from "mandate"

const where = App.parseLocation(process.argv[2] ?? "ledger-example.db")

// A ledger is created once (its mode fixed at creation); run again, the example adds to it.
const created = Ledger.createLedger({ ledger: "default", mode: "local_full", key: undefined }).pipe(
  Effect.catchIf((e) => e._tag === "LedgerError" && e.reason === "ledger_exists", () => Effect.void),
  Effect.provide(App.openStores(where))
)

const usd = (amount) => ({ tokens: 0, usd: amount, latency_ms: 0, risk: 0 })

const program = Effect.gen(function* () {
  // Enforce mode: a refused action does not run. The run id names this run's budget, so that a
  // second run on the same file starts with a fresh 1.00 USD.
  const runId = `run-${randomUUID()}`
  const guard = yield* Ledger.makeGuard({
    mode: "enforce", policy: Ledger.usdBudget("1.00", runId), namespace: "example", runId, owner: "example"
  })
  for (const doc of [1, 2, 3, 4]) {
    const action = { id: `${runId}-summarize-${doc}`, kind: "llm", metadata: { doc }, estimate: usd("0.30") }
    // The work itself: here a stand-in that reports what it actually spent.
    const work = Effect.succeed({ value: `summary of document ${doc}`, actual: usd("0.28") })
    const line = yield* guard.guard(action, work).pipe(
      Effect.map((value) => `ran: ${value}`),
      Effect.catchTag("ActionDenied", (e) => Effect.succeed(`refused: ${e.decision.reason}`))
    )
    console.log(`document ${doc} ${line}`)
  }
  const store = yield* Ledger.LedgerStore
  const verified = yield* Ledger.verifyLedger(store.lines, yield* store.head)
  console.log(`ledger: ${verified.lines} lines, chain intact`)
})

await Effect.runPromise(Effect.zipRight(created, program.pipe(Effect.provide(App.openLedger(where)))))
