// In-memory Writ executor stores (spec section 9), for tests and single-process use. They live as
// long as the Layer instance, which therefore plays the part of the durable file: a scenario
// `restart` keeps the instance and rebuilds the executor, losing only what the executor held
// outside its stores. Every read and write goes through the MemoryJournal shared with the memory
// Reservations, so one `Atomic.transaction` covers the call store and the count and total
// consumption together, and a failed step is undone write by write (no half-state).
import { Effect, Layer, Option, String as Str } from "effect"
import type { Atomic } from "../../accounting/reservations.js"
import { storeError } from "../../accounting/store-error.js"
import { Reservations } from "../../accounting/reservations.js"
import {
  AckStore,
  type AcceptedCall,
  type AuditEntry,
  AuditLog,
  type CallEntry,
  CallStore,
  DelegationStore,
  type HeldTally,
  type IssuedWrit,
  type KeptAck,
  type ReceivedSub,
  type RecordedRevoke,
  type Reversal,
  ReversalStore,
  RevokeStore,
  TallyStore,
  type WritStores,
  writStoresContext
} from "../../writ/executor/stores.js"
import * as MemoryAtomic from "./atomic.js"
import { MemoryJournal, type MemoryJournalService } from "./atomic.js"
import { layerWithJournal as reservationsWithJournal } from "./reservations.js"

const byAccThenId = (a: HeldTally, b: HeldTally): number => a.acc - b.acc || Str.Order(a.tally, b.tally)

/** Sets `map[key]` to `value` as one journaled write (undone by restoring what was there). */
// Each write reads what it replaces when it runs (not when the Effect is built), so its undo
// restores exactly the state it changed.
const setIn = <K, V>(journal: MemoryJournalService, map: Map<K, V>, key: K, value: V) =>
  Effect.suspend(() => {
    const had = map.has(key)
    const before = map.get(key)
    return journal.write(
      () => void map.set(key, value),
      () => (had ? void map.set(key, before as V) : void map.delete(key))
    )
  })
const deleteIn = <K, V>(journal: MemoryJournalService, map: Map<K, V>, key: K) =>
  Effect.suspend(() => {
    if (!map.has(key)) return Effect.void
    const before = map.get(key) as V
    return journal.write(() => void map.delete(key), () => void map.set(key, before))
  })
const pushTo = <V>(journal: MemoryJournalService, list: Array<V>, value: V) =>
  journal.write(() => void list.push(value), () => void list.pop())

export const makeCallStore = (journal: MemoryJournalService) => {
  const entries = new Map<string, CallEntry>()
  const order: Array<string> = []
  const key = (leaf: string, id: string) => `${leaf}\u0000${id}`
  const read = <A>(f: () => A) => journal.transaction(Effect.sync(f))
  return CallStore.of({
    get: (leaf, id) => read(() => Option.fromNullable(entries.get(key(leaf, id)))),
    insertPending: (accepted: AcceptedCall) =>
      journal.transaction(Effect.gen(function*() {
        const k = key(accepted.leaf, accepted.id)
        // As a database's key constraint would: a StoreError, and nothing written.
        if (entries.has(k)) return yield* Effect.fail(storeError("writ.callStore.insertPending")(new Error("already recorded")))
        yield* setIn(journal, entries, k, { state: "pending", accepted })
        yield* pushTo(journal, order, k)
      })),
    finalize: (leaf, id, tally, res) =>
      journal.transaction(Effect.gen(function*() {
        const k = key(leaf, id)
        const entry = entries.get(k)
        if (entry === undefined) return yield* Effect.fail(storeError("writ.callStore.finalize")(new Error("never recorded")))
        // One process owns a memory store: an entry already final was resolved by this one.
        if (entry.state === "final") return false
        yield* setIn(journal, entries, k, { state: "final", accepted: entry.accepted, tally, res })
        return true
      })),
    pending: read(() =>
      order.flatMap((k) => {
        const e = entries.get(k)
        return e !== undefined && e.state === "pending" ? [e.accepted] : []
      })
    )
  })
}

export const makeTallyStore = (journal: MemoryJournalService) => {
  const tallies = new Map<string, HeldTally>()
  const read = <A>(f: () => A) => journal.transaction(Effect.sync(f))
  return TallyStore.of({
    put: (held) => journal.transaction(setIn(journal, tallies, held.tally, held)),
    get: (id) => read(() => Option.fromNullable(tallies.get(id))),
    underWrit: (writ) => read(() => [...tallies.values()].filter((t) => t.chain.includes(writ)).sort(byAccThenId)),
    underIssuer: (iss) => read(() => [...tallies.values()].filter((t) => t.issuers.includes(iss)).sort(byAccThenId))
  })
}

export const makeRevokeStore = (journal: MemoryJournalService) => {
  const records: Array<RecordedRevoke> = []
  // Indexes, so that a flood of revokes does not slow every call's step 7 (section 12).
  const byWrit = new Map<string, number>()
  const byKey = new Map<string, number>()
  const bump = (m: Map<string, number>, k: string) => setIn(journal, m, k, (m.get(k) ?? 0) + 1)
  return RevokeStore.of({
    record: (r) =>
      journal.transaction(Effect.zipRight(
        pushTo(journal, records, r),
        Effect.suspend(() => (r.writ === "*" ? bump(byKey, r.iss) : bump(byWrit, r.writ)))
      )),
    covers: (writs, issuers) =>
      journal.transaction(Effect.sync(() => writs.some((w) => byWrit.has(w)) || issuers.some((k) => byKey.has(k))))
  })
}

export const makeReversalStore = (journal: MemoryJournalService) => {
  const reversals = new Map<string, Reversal>()
  return ReversalStore.of({
    get: (target) => journal.transaction(Effect.sync(() => Option.fromNullable(reversals.get(target)))),
    begin: (target, call) => journal.transaction(setIn(journal, reversals, target, { state: "begun", call })),
    succeed: (target, call, res) =>
      journal.transaction(setIn(journal, reversals, target, { state: "succeeded", call, res })),
    clear: (target) => journal.transaction(deleteIn(journal, reversals, target)),
    markBegunUnknown: journal.transaction(Effect.gen(function*() {
      let n = 0
      for (const [target, r] of [...reversals]) {
        if (r.state !== "begun") continue
        yield* setIn(journal, reversals, target, { state: "unknown", call: r.call })
        n++
      }
      return n
    }))
  })
}

export const makeDelegationStore = (journal: MemoryJournalService) => {
  const issued: Array<IssuedWrit> = []
  const subs: Array<ReceivedSub> = []
  return DelegationStore.of({
    recordIssued: (w) =>
      journal.transaction(Effect.suspend(() =>
        issued.some((x) => x.writ === w.writ && x.leaf === w.leaf && x.id === w.id)
          ? Effect.void
          : pushTo(journal, issued, w)
      )),
    recordSub: (s) =>
      journal.transaction(Effect.gen(function*() {
        const i = subs.findIndex((x) =>
          x.leaf === s.leaf && x.id === s.id && x.subCall === s.subCall && x.signer === s.signer
        )
        if (i < 0) return yield* pushTo(journal, subs, s)
        const before = subs[i]
        yield* journal.write(() => void (subs[i] = s), () => void (subs[i] = before))
      })),
    forCall: (leaf, id) =>
      journal.transaction(Effect.sync(() => ({
        wrt: issued.filter((w) => w.leaf === leaf && w.id === id).map((w) => w.object),
        sub: subs.filter((s) => s.leaf === leaf && s.id === id).map((s) => s.object)
      }))),
    issuedUnder: (writ, iss) =>
      journal.transaction(Effect.sync(() =>
        issued.filter((w) => (writ === "*" ? w.aboveIssuers.includes(iss) : w.above.includes(writ)))
      ))
  })
}

export const makeAckStore = (journal: MemoryJournalService) => {
  const acks = new Map<string, KeptAck>()
  return AckStore.of({
    keep: (k) =>
      journal.transaction(Effect.suspend(() =>
        acks.has(`${k.revoke}\u0000${k.ack}`) ? Effect.void : setIn(journal, acks, `${k.revoke}\u0000${k.ack}`, k)
      )),
    forRevoke: (revoke) =>
      journal.transaction(Effect.sync(() =>
        [...acks.values()].filter((k) => k.revoke === revoke).sort((a, b) => Str.Order(a.ack, b.ack))
      ))
  })
}

export const makeAuditLog = (journal: MemoryJournalService) => {
  const entries: Array<AuditEntry> = []
  return AuditLog.of({
    append: (e) => journal.transaction(pushTo(journal, entries, e)),
    read: journal.transaction(Effect.sync(() => [...entries]))
  })
}

/** Every Writ store over the MemoryJournal in context (shares its Atomic with Reservations). */
export const storesWithJournal: Layer.Layer<WritStores, never, MemoryJournal> = Layer.effectContext(
  Effect.map(MemoryJournal, (journal) =>
    writStoresContext({
      calls: makeCallStore(journal),
      tallies: makeTallyStore(journal),
      revokes: makeRevokeStore(journal),
      reversals: makeReversalStore(journal),
      delegations: makeDelegationStore(journal),
      acks: makeAckStore(journal),
      audit: makeAuditLog(journal)
    }))
)

/** A fresh in-memory executor store: every Writ store, Reservations, Atomic and the journal. */
export const layer: Layer.Layer<WritStores | Reservations | Atomic | MemoryJournal> = Layer.mergeAll(
  storesWithJournal,
  reservationsWithJournal
).pipe(Layer.provideMerge(MemoryAtomic.layer))
