// Statements on the embedded store's hot paths (a reserve, a settlement, a ledger append), sent
// to the connection of the atomic step in context as text and parameters. A `sql` template costs
// a Statement, its compilation and a `sql.execute` span per statement, several times the statement
// itself on SQLite (a guarded action makes about ten): here each is one call to the driver, through
// its cache of prepared statements and transaction.ts's guard of the step. Rows read this way are
// still decoded by their Schema (store/sql/rows.ts), synchronously (an Either is an Effect).
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Effect } from "effect"

/**
 * Runs `f` on the connection of the open atomic step, or on the client's connection reserved for
 * the call when there is none (a plain read outside any step).
 */
export const onConnection = <A, E>(sql: SqlClient.SqlClient, f: (conn: Connection) => Effect.Effect<A, E>): Effect.Effect<A, E | unknown> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    open._tag === "Some" ? f(open.value[0]) : Effect.scoped(Effect.flatMap(sql.reserve, f)))

/** `(?, ?), (?, ?)`: `rows` groups of `width` placeholders. */
export const placeholders = (rows: number, width: number): string => {
  const one = `(${Array.from({ length: width }, () => "?").join(", ")})`
  return Array.from({ length: rows }, () => one).join(", ")
}

/** `?, ?, ?`: an IN list of `n` (SQLite accepts an empty one). */
export const inList = (n: number): string => Array.from({ length: n }, () => "?").join(", ")
