// In-memory YeaHandles (src/yea/state.ts): handle -> remainder and holder, swept after `expires`.
import { Effect, Layer } from "effect"
import { type HandleRecord, YeaHandles } from "../../yea/state.js"
import { MemoryJournal } from "./atomic.js"
import { makeJournaledMap, MAX_ENTRIES } from "./yea-map.js"

export const layer: Layer.Layer<YeaHandles, never, MemoryJournal> = Layer.effect(
  YeaHandles,
  Effect.map(MemoryJournal, (journal) => {
    const map = makeJournaledMap<HandleRecord>(journal, "yea.handles", MAX_ENTRIES)
    return {
      put: (records) => Effect.forEach(records, (r) => map.set(r.handle, r), { discard: true }),
      get: map.get,
      sweep: (now) => map.sweep((r) => r.expires < now)
    }
  })
)
