// In-memory YeaProposals (src/yea/state.ts): proposal id -> record, swept after keepUntil.
import { Effect, Layer } from "effect"
import { type ProposalRecord, YeaProposals } from "../../yea/state.js"
import { MemoryJournal } from "./atomic.js"
import { makeJournaledMap, MAX_ENTRIES } from "./yea-map.js"

export const layer: Layer.Layer<YeaProposals, never, MemoryJournal> = Layer.effect(
  YeaProposals,
  Effect.map(MemoryJournal, (journal) => {
    const map = makeJournaledMap<ProposalRecord>(journal, "yea.proposals", MAX_ENTRIES)
    return {
      put: (r) => map.set(r.proposal.id, r),
      get: map.get,
      sweep: (now) => map.sweep((r) => r.keepUntil < now)
    }
  })
)
