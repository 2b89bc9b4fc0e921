// The memory store's transaction boundary: one lock for the whole in-memory state and an undo
// journal. A store write made inside `transaction` registers how to undo itself; if the step fails,
// dies or is interrupted, the journal is replayed backwards, so no half-state survives. Nested steps
// behave as savepoints. Every memory store (Reservations, and the executor's memory stores) must make
// its reads and writes inside `transaction` and register undos with `onRollback`, so that no
// reader sees another step's uncommitted writes.
import { Context, Effect, FiberRef, Layer, Option } from "effect"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"

interface Journal {
  readonly undos: Array<() => void>
}

export interface MemoryJournalService {
  readonly transaction: AtomicService["transaction"]
  /** Registers the undo of a write just made. Outside a transaction it is dropped (nothing to undo). */
  readonly onRollback: (undo: () => void) => Effect.Effect<void>
  /** Runs a synchronous mutation together with its undo, as one journaled write. */
  readonly write: (apply: () => void, undo: () => void) => Effect.Effect<void>
}

export class MemoryJournal extends Context.Tag("mandate/store/MemoryJournal")<MemoryJournal, MemoryJournalService>() {}

export const makeMemoryJournal: Effect.Effect<MemoryJournalService> = Effect.gen(function*() {
  const lock = yield* Effect.makeSemaphore(1)
  const current = FiberRef.unsafeMake<Option.Option<Journal>>(Option.none())

  const rollbackTo = (journal: Journal, mark: number) =>
    Effect.sync(() => {
      while (journal.undos.length > mark) journal.undos.pop()!()
    })

  const transaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(FiberRef.get(current), (open) => {
      if (Option.isSome(open)) {
        // Nested: a savepoint inside the outer step.
        const journal = open.value
        const mark = journal.undos.length
        return Effect.onExit(self, (exit) => (exit._tag === "Failure" ? rollbackTo(journal, mark) : Effect.void))
      }
      const journal: Journal = { undos: [] }
      return lock.withPermits(1)(
        Effect.locally(
          Effect.onExit(self, (exit) => (exit._tag === "Failure" ? rollbackTo(journal, 0) : Effect.void)),
          current,
          Option.some(journal)
        )
      )
    })

  const onRollback = (undo: () => void) =>
    Effect.map(FiberRef.get(current), (open) => {
      if (Option.isSome(open)) open.value.undos.push(undo)
    })

  const write = (apply: () => void, undo: () => void) =>
    Effect.flatMap(Effect.sync(apply), () => onRollback(undo))

  return { transaction, onRollback, write }
})

/** MemoryJournal and the Atomic service built on it (one per Layer instance: one "database"). */
export const layer: Layer.Layer<MemoryJournal | Atomic> = Layer.effectContext(
  Effect.map(makeMemoryJournal, (journal) =>
    Context.make(MemoryJournal, journal).pipe(Context.add(Atomic, { transaction: journal.transaction })))
)
