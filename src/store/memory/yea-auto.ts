// In-memory YeaAutoMemory (src/yea/state.ts): (proof.key, frame id) -> the reply to an auto INTENT,
// swept only after its `until` (at least 900 s, §4.3.1). When full it refuses new frames
// (a StoreError, `unavailable`) rather than forget one early.
import { Effect, Layer, Option } from "effect"
import { type AutoRecord, YeaAutoMemory } from "../../yea/state.js"
import { MemoryJournal } from "./atomic.js"
import { makeJournaledMap, MAX_ENTRIES } from "./yea-map.js"

const keyOf = (key: string, frame: string) => JSON.stringify([key, frame])

export const layer: Layer.Layer<YeaAutoMemory, never, MemoryJournal> = Layer.effect(
  YeaAutoMemory,
  Effect.map(MemoryJournal, (journal) => {
    const map = makeJournaledMap<AutoRecord>(journal, "yea.auto", MAX_ENTRIES)
    return {
      remember: (r) => map.setIfAbsent(keyOf(r.key, r.frame), r),
      complete: (key, frame, reply) =>
        journal.transaction(
          Effect.flatMap(map.get(keyOf(key, frame)), (r) => (Option.isNone(r) ? Effect.void : map.set(keyOf(key, frame), { ...r.value, reply })))
        ),
      sweep: (now) => map.sweep((r) => r.until < now)
    }
  })
)
