// An in-memory ledger store (tests, and the base of the JSONL file store's index): lines in an
// array, the held-reservations index in a map, every write journaled so that an enclosing atomic
// step that fails (a reserve refused after its lines were built) leaves nothing behind.
import { Effect, Layer, Option, Stream } from "effect"
import { ledgerError } from "../../ledger/reason.js"
import { type HeldReservation, type LedgerBackend, type LedgerInfo, LedgerStore, type StoredLine } from "../../ledger/writer.js"
import { MemoryJournal, type MemoryJournalService } from "./atomic.js"

export const makeMemoryLedger = (journal: MemoryJournalService): LedgerBackend => {
  let info: LedgerInfo | undefined
  const lines: Array<StoredLine> = []
  const held = new Map<string, HeldReservation & { owner: string }>()
  const push = (l: StoredLine) =>
    Effect.gen(function*() {
      yield* journal.write(() => void lines.push(l), () => void lines.pop())
      if (l.hold !== undefined) {
        const h = l.hold
        yield* journal.write(() => void held.set(h.id, h), () => void held.delete(h.id))
      }
      if (l.settle !== undefined) {
        const before = held.get(l.settle)
        const id = l.settle
        yield* journal.write(() => void held.delete(id), () => void (before !== undefined && held.set(id, before)))
      }
    })
  const head = () => (lines.length === 0 ? { seq: -1, hash: null } : { seq: lines[lines.length - 1].seq, hash: lines[lines.length - 1].hash })
  return {
    info: Effect.sync(() => Option.fromNullable(info)),
    create: (i, header) =>
      journal.transaction(Effect.gen(function*() {
        if (info !== undefined) return yield* ledgerError("ledger_exists", `ledger ${info.ledger} already exists`)
        info = i
        yield* push(header)
      })),
    append: (build) => journal.transaction(Effect.gen(function*() {
      if (info === undefined) return yield* ledgerError("ledger_missing", "no ledger")
      for (const l of build(head())) yield* push(l)
    })),
    lines: Stream.suspend(() => Stream.fromIterable(lines.slice().map((l) => l.line))),
    head: Effect.sync(head),
    held: (owner) => Effect.sync(() => [...held.values()].filter((h) => h.owner === owner).map(({ id, action_id, run_id }) => ({ id, action_id, run_id })))
  }
}

/** A LedgerStore over the MemoryJournal in context (shares its Atomic with memory Reservations). */
export const layer: Layer.Layer<LedgerStore, never, MemoryJournal> = Layer.effect(LedgerStore, Effect.map(MemoryJournal, makeMemoryLedger))
