// SQL YeaCommits: proposal id -> commit record, found also by receipt id. A claim is one
// `INSERT ... ON CONFLICT DO NOTHING RETURNING`, so two concurrent claims of one proposal cannot
// both succeed (in either database). The undo claim reads the row locked (`forUpdate` in
// PostgreSQL; SQLite's atomic step already holds the file's write lock) and writes it in one step.
import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { AtomicService } from "../../accounting/reservations.js"
import { StoreError } from "../../accounting/store-error.js"
import { CommitRecord, type YeaCommitsService } from "../../yea/state.js"
import { json, op, recordRow, SqlSchema } from "./yea-rows.js"

export const makeSqlCommits = (sql: SqlClient.SqlClient, transaction: AtomicService["transaction"], forUpdate: boolean): YeaCommitsService => {
  const Row = recordRow(CommitRecord)
  const encode = json(CommitRecord)
  const byProposal = SqlSchema.findOne({ Request: Schema.String, Result: Row, execute: (p) => sql`SELECT record FROM yea_commits WHERE proposal = ${p}` })
  const locked = SqlSchema.findOne({
    Request: Schema.String,
    Result: Row,
    execute: (p) => (forUpdate ? sql`SELECT record FROM yea_commits WHERE proposal = ${p} FOR UPDATE` : sql`SELECT record FROM yea_commits WHERE proposal = ${p}`)
  })
  const byReceipt = SqlSchema.findOne({ Request: Schema.String, Result: Row, execute: (r) => sql`SELECT record FROM yea_commits WHERE receipt_id = ${r}` })
  const missing = (name: string, p: string) => new StoreError({ operation: `yea.commits.${name}`, message: `no commit of ${p}` })
  const update = (name: string, p: string, f: (r: CommitRecord) => CommitRecord) =>
    op(name, transaction(Effect.gen(function* () {
      const row = yield* locked(p)
      if (Option.isNone(row)) return yield* Effect.fail(missing(name, p))
      const next = f(row.value.record)
      yield* sql`UPDATE yea_commits SET record = ${encode(next)}, receipt_id = ${next.receipt?.id ?? null} WHERE proposal = ${p}`
    })))
  return {
    claim: (r) =>
      op("commits.claim", Effect.gen(function* () {
        const inserted = yield* sql`INSERT INTO yea_commits (proposal, receipt_id, record) VALUES (${r.proposal}, ${null}, ${encode(r)})
          ON CONFLICT (proposal) DO NOTHING RETURNING proposal`
        if (inserted.length > 0) return Option.none()
        return Option.map(yield* byProposal(r.proposal), (x) => x.record)
      })),
    complete: (p, receipt) => update("commits.complete", p, (r) => ({ ...r, state: "done", receipt })),
    settle: (p, outcome) => update("commits.settle", p, (r) => ({ ...r, state: outcome.state, outcome })),
    byProposal: (p) => op("commits.byProposal", Effect.map(byProposal(p), Option.map((x) => x.record))),
    byReceipt: (id) => op("commits.byReceipt", Effect.map(byReceipt(id), Option.map((x) => x.record))),
    claimUndo: (p, owner) =>
      op("commits.claimUndo", transaction(Effect.gen(function* () {
        const row = yield* locked(p)
        if (Option.isNone(row)) return yield* Effect.fail(missing("claimUndo", p))
        const r = row.value.record
        if (r.undo !== undefined) return Option.some(r)
        yield* sql`UPDATE yea_commits SET record = ${encode({ ...r, undo: { state: "pending", owner } })} WHERE proposal = ${p}`
        return Option.none()
      }))),
    completeUndo: (p, receipt) => update("commits.completeUndo", p, (r) => ({ ...r, undo: { state: "done", owner: r.undo?.owner ?? "", receipt } })),
    settleUndo: (p, outcome) => update("commits.settleUndo", p, (r) => ({ ...r, undo: { state: outcome.state, owner: r.undo?.owner ?? "", outcome } }))
  }
}
