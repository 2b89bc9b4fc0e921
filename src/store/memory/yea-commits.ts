// In-memory YeaCommits (src/yea/state.ts): proposal id -> commit record, and receipt id -> proposal
// id. Kept for the store's life (a replay must find its receipt).
import { Effect, Layer, Option } from "effect"
import { StoreError } from "../../accounting/store-error.js"
import type { Receipt } from "../../yea/receipt.js"
import { type CommitRecord, YeaCommits } from "../../yea/state.js"
import { MemoryJournal } from "./atomic.js"
import { makeJournaledMap, MAX_ENTRIES } from "./yea-map.js"

export const layer: Layer.Layer<YeaCommits, never, MemoryJournal> = Layer.effect(
  YeaCommits,
  Effect.map(MemoryJournal, (journal) => {
    const commits = makeJournaledMap<CommitRecord>(journal, "yea.commits", MAX_ENTRIES)
    const receipts = makeJournaledMap<string>(journal, "yea.receipts", MAX_ENTRIES)
    const missing = (op: string, id: string) => new StoreError({ operation: `yea.commits.${op}`, message: `no commit of ${id}` })
    const update = (proposal: string, op: string, f: (r: CommitRecord) => CommitRecord) =>
      journal.transaction(
        Effect.flatMap(commits.get(proposal), (r) => (Option.isNone(r) ? Effect.fail(missing(op, proposal)) : commits.set(proposal, f(r.value))))
      )
    return {
      claim: (r) => commits.setIfAbsent(r.proposal, r),
      complete: (proposal: string, receipt: Receipt) =>
        journal.transaction(
          Effect.zipRight(update(proposal, "complete", (r) => ({ ...r, state: "done", receipt })), receipts.set(receipt.id, proposal))
        ),
      settle: (proposal, outcome) => update(proposal, "settle", (r) => ({ ...r, state: outcome.state, outcome })),
      byProposal: commits.get,
      byReceipt: (id) =>
        journal.transaction(Effect.flatMap(receipts.get(id), (p) => (Option.isNone(p) ? Effect.succeed(Option.none()) : commits.get(p.value)))),
      claimUndo: (proposal, owner) =>
        journal.transaction(
          Effect.flatMap(commits.get(proposal), (r) => {
            if (Option.isNone(r)) return Effect.fail(missing("claimUndo", proposal))
            if (r.value.undo !== undefined) return Effect.succeed(r)
            return Effect.as(commits.set(proposal, { ...r.value, undo: { state: "pending", owner } }), Option.none())
          })
        ),
      completeUndo: (proposal, receipt) => update(proposal, "completeUndo", (r) => ({ ...r, undo: { state: "done", owner: r.undo?.owner ?? "", receipt } })),
      settleUndo: (proposal, outcome) => update(proposal, "settleUndo", (r) => ({ ...r, undo: { state: outcome.state, owner: r.undo?.owner ?? "", outcome } }))
    }
  })
)
