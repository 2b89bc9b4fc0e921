// A process that reserves one guarded action and then hangs in it, for the recovery test
// (recover.integration.test.ts): it prints `held` once the reservation is recorded, and is SIGKILLed there.
// Run: node --import tsx test/ledger/holder.ts '<json args>'
import { Effect } from "effect"
import { openLedger, parseLocation } from "../../src/cli/ledger-open.js"
import { compose, dedup, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"

const args = JSON.parse(process.argv[2]) as { readonly where: string; readonly owner: string; readonly id: string; readonly usd: string }

const program = Effect.gen(function*() {
  const guard = yield* makeGuard({ mode: "enforce", policy: compose(usdBudget("1" as Usd), dedup("exact")), namespace: "rec", runId: `run-${args.owner}`, owner: args.owner })
  yield* guard.guard(
    { id: args.id, kind: "tool", metadata: { job: args.id }, estimate: { tokens: 0, usd: args.usd as Usd, latency_ms: 0, risk: 0 } },
    Effect.zipRight(Effect.sync(() => process.stdout.write("held\n")), Effect.never)
  )
})

Effect.runPromise(Effect.provide(program, openLedger(parseLocation(args.where), { ledger: "rec" }))).catch((e) => {
  process.stderr.write(String(e) + "\n")
  process.exit(1)
})
