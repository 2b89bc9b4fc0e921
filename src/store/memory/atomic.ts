// The memory store's transaction boundary: one lock for the whole in-memory state and an undo
// journal. A store write made inside `transaction` registers how to undo itself; if the step fails,
// dies or is interrupted, the journal is replayed backwards, so no half-state survives. Nested steps
// behave as savepoints. Every memory store (Reservations, and the executor's memory stores) must make
// its reads and writes inside `transaction` and register undos with `onRollback`, so that no
// reader sees another step's uncommitted writes.
//
// Fault injection: `failCommits(n)` makes the next n outermost steps fail at their commit, as a SQL
// store's COMMIT fails on a full disk: the step's writes are undone and the step fails with the
// StoreError a SQL store gives ("memory.commit"), so tests of the protocols' write-failure rules
// (Writ section 9) can run on the memory store too.
import { Context, Effect, Exit, FiberRef, Layer, Option } from "effect"
import { Atomic, type AtomicService } from "../../accounting/reservations.js"
import { StoreError } from "../../accounting/store-error.js"

interface Journal {
  readonly undos: Array<() => void>
}

export interface MemoryJournalService {
  readonly transaction: AtomicService["transaction"]
  /** Registers the undo of a write just made. Outside a transaction it is dropped (nothing to undo). */
  readonly onRollback: (undo: () => void) => Effect.Effect<void>
  /** Runs a synchronous mutation together with its undo, as one journaled write. */
  readonly write: (apply: () => void, undo: () => void) => Effect.Effect<void>
  /** Fault injection: the next `n` outermost steps that succeed fail at commit instead (0 clears). */
  readonly failCommits: (n: number) => Effect.Effect<void>
}

export class MemoryJournal extends Context.Tag("mandate/store/MemoryJournal")<MemoryJournal, MemoryJournalService>() {}

export const makeMemoryJournal: Effect.Effect<MemoryJournalService> = Effect.gen(function*() {
  const lock = yield* Effect.makeSemaphore(1)
  const current = FiberRef.unsafeMake<Option.Option<Journal>>(Option.none())
  let commitFaults = 0

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
      const commit: Effect.Effect<void, StoreError> = Effect.suspend(() => {
        if (commitFaults === 0) return Effect.void
        commitFaults--
        return Effect.zipRight(
          rollbackTo(journal, 0),
          Effect.fail(new StoreError({ operation: "memory.commit", store: "memory", message: "injected commit failure" }))
        )
      })
      return lock.withPermits(1)(
        Effect.locally(
          Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(Effect.exit(restore(self)), (exit): Effect.Effect<A, E | StoreError> =>
              Exit.isSuccess(exit) ? Effect.as(commit, exit.value) : Effect.zipRight(rollbackTo(journal, 0), exit))
          ),
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

  const failCommits = (n: number) => Effect.sync(() => void (commitFaults = Math.max(0, Math.floor(n))))

  return { transaction, onRollback, write, failCommits }
})

/** MemoryJournal and the Atomic service built on it (one per Layer instance: one "database"). */
export const layer: Layer.Layer<MemoryJournal | Atomic> = Layer.effectContext(
  Effect.map(makeMemoryJournal, (journal) =>
    Context.make(MemoryJournal, journal).pipe(Context.add(Atomic, { transaction: journal.transaction })))
)
