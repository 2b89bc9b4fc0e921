// A bounded, journaled map for the in-memory YEA stores: every write registers its undo with the
// MemoryJournal (so it joins the Atomic step it runs in), reads take the journal's lock (no reader
// sees another step's uncommitted writes), and the entry count is capped so a peer cannot grow the
// process without bound (design.md security review, "unbounded state maps").
import { Effect, Option } from "effect"
import { StoreError } from "../../accounting/store-error.js"
import type { MemoryJournalService } from "./atomic.js"

export interface JournaledMap<V> {
  readonly get: (key: string) => Effect.Effect<Option.Option<V>>
  /** Sets `key`; a StoreError when the map is full and `key` is new. */
  readonly set: (key: string, value: V) => Effect.Effect<void, StoreError>
  /** Sets `key` only when absent: None when set now, else the existing value. Atomic. */
  readonly setIfAbsent: (key: string, value: V) => Effect.Effect<Option.Option<V>, StoreError>
  readonly remove: (key: string) => Effect.Effect<void>
  /** Removes every entry for which `expired` holds. */
  readonly sweep: (expired: (value: V) => boolean) => Effect.Effect<void>
  readonly size: () => number
}

export const makeJournaledMap = <V>(journal: MemoryJournalService, name: string, maxEntries: number): JournaledMap<V> => {
  const map = new Map<string, V>()
  const write = (key: string, value: V | undefined) => {
    const before = map.get(key)
    const had = map.has(key)
    return journal.write(
      () => (value === undefined ? void map.delete(key) : void map.set(key, value)),
      () => (had ? void map.set(key, before as V) : void map.delete(key))
    )
  }
  const set = (key: string, value: V) =>
    map.has(key) || map.size < maxEntries
      ? write(key, value)
      : Effect.fail(new StoreError({ operation: `${name}.set`, message: `${name} is full (${maxEntries} entries)` }))
  return {
    get: (key) => journal.transaction(Effect.sync(() => Option.fromNullable(map.get(key)))).pipe(Effect.orDie),
    set: (key, value) => journal.transaction(set(key, value)),
    setIfAbsent: (key, value) =>
      journal.transaction(
        Effect.suspend(() => (map.has(key) ? Effect.succeed(Option.some(map.get(key) as V)) : Effect.as(set(key, value), Option.none())))
      ),
    remove: (key) => journal.transaction(write(key, undefined)).pipe(Effect.orDie),
    sweep: (expired) =>
      journal
        .transaction(Effect.forEach([...map].filter(([, v]) => expired(v)), ([k]) => write(k, undefined), { discard: true }))
        .pipe(Effect.orDie),
    size: () => map.size
  }
}

/** The cap of each in-memory YEA store. */
export const MAX_ENTRIES = 500_000
