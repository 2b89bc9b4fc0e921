// The transaction boundary of the SQL stores (the `Atomic` service), written here rather than taken
// from `SqlClient.withTransaction` because that one runs COMMIT and ROLLBACK with `Effect.orDie`:
// a commit refused by the database (a full disk, a file made read-only, a server gone) became a
// defect, an HTTP 500 with no code, instead of the StoreError on which the protocols apply their
// rule for write failures (Writ section 9: a write that fails MUST NOT be taken as made). Here
// BEGIN, COMMIT, ROLLBACK and every savepoint statement fail with a StoreError naming the store.
//
// A transaction can also be lost under the caller: SQLite rolls the whole transaction back by itself
// after SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or SQLITE_NOMEM (its documentation, "Response To
// Errors Within A Transaction"), and PostgreSQL aborts it after any failed statement, after which
// its COMMIT silently rolls back. A caller that caught such a failure and went on would have its
// later statements run outside any transaction (SQLite) or be told that a rolled-back step
// committed (PostgreSQL). So the connection handed to the step is guarded: after a statement fails
// that way, every further statement of the step fails, and so does the step's commit, unless a
// savepoint rolled back past the failure (which proves the transaction alive again).
//
// The connection is published as `SqlClient.TransactionConnection`, as @effect/sql does, so every
// statement of every store on the same client joins the step, and @effect/sql's own
// `withTransaction` called inside a step becomes a savepoint of it.
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option, Scope } from "effect"
import type { AtomicService } from "../../accounting/reservations.js"
import { describeCause, StoreError } from "../../accounting/store-error.js"

export interface TransactionDialect {
  /** The store's name in operation names, e.g. "sqlite" gives "sqlite.commit". */
  readonly store: string
  /** Where the store lives (a file, or a URL without credentials), carried by every StoreError. */
  readonly location: string
  /** The statement that opens a transaction. */
  readonly begin: string
  /** Whether a failed statement leaves the transaction rolled back or aborted by the database. */
  readonly abandons: (error: SqlError) => boolean
  /**
   * Whether BEGIN, COMMIT, ROLLBACK and the savepoint statements go through the driver's cache of
   * prepared statements. SQLite: their texts are few (a savepoint is named by its depth), and
   * preparing each anew cost every atomic step of a guarded action a native prepare per statement.
   */
  readonly cached?: boolean
}

interface Step {
  depth: number
  /**
   * The failure that made the database abandon the transaction, and the savepoint depth it happened
   * at; `alive` when the database did not (a joined step failed after writing, see `makeJoin`): a
   * savepoint at that depth or above can still undo its writes.
   */
  abandoned: { readonly error: unknown; readonly depth: number; readonly alive?: boolean } | undefined
}

/** The StoreError of a failed transaction statement (`what` is "begin", "commit", "rollback", ...). */
export const transactionError = (dialect: TransactionDialect, what: string, cause: unknown, message?: string) =>
  new StoreError({
    operation: `${dialect.store}.${what}`,
    store: dialect.location,
    message: message ?? describeCause(cause),
    cause
  })

/** The step's connection: refuses every statement once the database has abandoned the transaction. */
const guard = (conn: Connection, step: Step, dialect: TransactionDialect): Connection => {
  const run = <A>(statement: () => Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> =>
    Effect.suspend(() => {
      if (step.abandoned !== undefined) {
        return Effect.fail(new SqlError({
          message: "the transaction was abandoned by the database after an earlier failure",
          cause: step.abandoned.error
        }))
      }
      return Effect.tapError(statement(), (error) =>
        Effect.sync(() => {
          if (step.abandoned === undefined && dialect.abandons(error)) step.abandoned = { error, depth: step.depth }
        }))
    })
  return {
    execute: (sql, params, transformRows) => run(() => conn.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => run(() => conn.executeRaw(sql, params)),
    executeValues: (sql, params) => run(() => conn.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) => run(() => conn.executeUnprepared(sql, params, transformRows)),
    // No store streams rows; kept as the driver has it.
    executeStream: (sql, params, transformRows) => conn.executeStream(sql, params, transformRows)
  }
}

const steps = new WeakMap<Connection, { readonly raw: Connection; readonly step: Step }>()

const statement = (conn: Connection, sql: string, dialect: TransactionDialect) =>
  dialect.cached === true ? conn.execute(sql, [], undefined) : conn.executeUnprepared(sql, [], undefined)

/** The transaction boundary over `sql` (see the module comment). */
export const makeTransaction = (sql: SqlClient.SqlClient, dialect: TransactionDialect): AtomicService["transaction"] =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) => {
        const joined = Option.isSome(open) ? steps.get(open.value[0]) : undefined
        if (Option.isSome(open) && joined !== undefined) {
          return savepoint(restore(self), joined.raw, open.value[0], joined.step, open.value[1] + 1, dialect)
        }
        return outermost(restore(self), sql, dialect)
      })
    )

const outermost = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  sql: SqlClient.SqlClient,
  dialect: TransactionDialect
): Effect.Effect<A, E | StoreError, R> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const acquired = yield* Effect.exit(Scope.extend(sql.reserve, scope))
    if (Exit.isFailure(acquired)) {
      yield* Scope.close(scope, acquired)
      return yield* Effect.failCause(Cause.map(acquired.cause, (e) => transactionError(dialect, "begin", e)))
    }
    const raw = acquired.value
    const step: Step = { depth: 0, abandoned: undefined }
    const conn = guard(raw, step, dialect)
    steps.set(conn, { raw, step })
    const exit = yield* Effect.exit(Effect.zipRight(
      Effect.mapError(statement(raw, dialect.begin, dialect), (e) => transactionError(dialect, "begin", e)),
      Effect.provideService(self, SqlClient.TransactionConnection, [conn, 0] as const)
    ))
    const quietRollback = Effect.ignore(statement(raw, "ROLLBACK", dialect))
    let result: Exit.Exit<A, E | StoreError>
    if (Exit.isSuccess(exit)) {
      if (step.abandoned !== undefined) {
        // The caller went on after a failure that cost the transaction: its writes are gone.
        yield* quietRollback
        result = Exit.fail(transactionError(
          dialect,
          "commit",
          step.abandoned.error,
          `not committed, the database abandoned the transaction: ${describeCause(step.abandoned.error)}`
        ))
      } else {
        const committed = yield* Effect.exit(statement(raw, "COMMIT", dialect))
        if (Exit.isFailure(committed)) {
          // SQLite keeps the transaction open after some failed commits (SQLITE_BUSY): end it.
          yield* quietRollback
          result = Exit.fail(transactionError(dialect, "commit", Cause.squash(committed.cause)))
        } else {
          result = exit
        }
      }
    } else {
      const rolledBack = yield* Effect.exit(statement(raw, "ROLLBACK", dialect))
      // A rollback that fails after the database abandoned the transaction has nothing left to undo
      // (SQLite: "no transaction is active"); otherwise the store cannot vouch for its state.
      result = Exit.isFailure(rolledBack) && step.abandoned === undefined && Cause.isFailType(exit.cause)
        ? Exit.fail(transactionError(dialect, "rollback", Cause.squash(rolledBack.cause)))
        : exit
    }
    steps.delete(conn)
    yield* Scope.close(scope, result)
    return yield* result
  })

const savepoint = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  raw: Connection,
  conn: Connection,
  step: Step,
  depth: number,
  dialect: TransactionDialect
): Effect.Effect<A, E | StoreError, R> =>
  Effect.gen(function*() {
    const name = `mandate_step_${depth}`
    // Opening a savepoint in an abandoned transaction is refused by the guard, as any statement.
    yield* Effect.mapError(
      Effect.suspend(() =>
        step.abandoned === undefined ? statement(raw, `SAVEPOINT ${name}`, dialect) : statement(conn, `SAVEPOINT ${name}`, dialect)
      ),
      (e) => transactionError(dialect, "savepoint", e)
    )
    const outer = step.depth
    step.depth = depth
    const exit = yield* Effect.exit(Effect.provideService(self, SqlClient.TransactionConnection, [conn, depth] as const))
    step.depth = outer
    if (Exit.isSuccess(exit)) {
      const abandoned = step.abandoned
      if (abandoned !== undefined && abandoned.alive === true && abandoned.depth >= depth) {
        // A joined step failed after writing and its caller went on: this savepoint holds those
        // writes, so it is rolled back and fails alone (the rest of the transaction still commits).
        const undone = yield* Effect.exit(statement(raw, `ROLLBACK TO SAVEPOINT ${name}`, dialect))
        if (Exit.isSuccess(undone)) {
          step.abandoned = undefined
          yield* Effect.ignore(statement(raw, `RELEASE SAVEPOINT ${name}`, dialect))
        }
        return yield* Effect.fail(transactionError(dialect, "savepoint", abandoned.error, `not committed, a write of this step failed: ${describeCause(abandoned.error)}`))
      }
      if (abandoned !== undefined) return yield* exit // the outermost step refuses to commit
      const released = yield* Effect.exit(statement(raw, `RELEASE SAVEPOINT ${name}`, dialect))
      if (Exit.isFailure(released)) {
        step.abandoned ??= { error: Cause.squash(released.cause), depth: outer }
        return yield* Effect.fail(transactionError(dialect, "savepoint", Cause.squash(released.cause)))
      }
      return exit.value
    }
    const rolledBack = yield* Effect.exit(statement(raw, `ROLLBACK TO SAVEPOINT ${name}`, dialect))
    if (Exit.isSuccess(rolledBack)) {
      // The transaction is alive again: a failure inside this savepoint no longer counts.
      if (step.abandoned !== undefined && step.abandoned.depth >= depth) step.abandoned = undefined
      yield* Effect.ignore(statement(raw, `RELEASE SAVEPOINT ${name}`, dialect))
      return yield* exit
    }
    step.abandoned ??= { error: Cause.squash(rolledBack.cause), depth: outer }
    return yield* (Cause.isFailType(exit.cause)
      ? Effect.fail(transactionError(dialect, "rollback", Cause.squash(rolledBack.cause)))
      : exit)
  })

/**
 * A boundary that joins the caller's open step without a savepoint of its own (one statement each
 * way fewer per joined step), or runs it in `transaction` (the store's Atomic) when there is none. What a savepoint gave is
 * kept another way: a joined effect that fails with a StoreError, dies or is interrupted may have
 * written, so its failure marks the step as abandoned at the current depth; then every further
 * statement of the step is refused, and the enclosing savepoint (or the transaction) undoes its
 * writes, as when the database itself abandons a transaction. A typed failure of the caller's own
 * (not a StoreError) passes unmarked: the joined effect must raise those only before its first
 * write (accounting/core.ts settles and the SQLite stores check everything first, then write).
 */
export const makeJoin = (transaction: AtomicService["transaction"]): AtomicService["transaction"] =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) => {
      const joined = Option.isSome(open) ? steps.get(open.value[0]) : undefined
      if (joined === undefined) return transaction(self)
      const step = joined.step
      return Effect.onError(self, (cause) =>
        Effect.sync(() => {
          const failure = Cause.failureOption(cause)
          const own = Option.isSome(failure) && !(failure.value instanceof StoreError) && !Cause.isDie(cause) && !Cause.isInterrupted(cause)
          if (!own && step.abandoned === undefined) step.abandoned = { error: Cause.squash(cause), depth: step.depth, alive: true }
        }))
    })

/** SQLite's result codes after which it rolls the whole transaction back itself (or may have). */
const SQLITE_ABANDONS = /^SQLITE_(FULL|IOERR|BUSY|NOMEM|CORRUPT|NOTADB|READONLY|CANTOPEN)/

/** Whether a SQLite statement failure cost the transaction. */
export const sqliteAbandons = (error: SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && SQLITE_ABANDONS.test(code)
}
