// Freshness of the plain replay path (src/writ/executor/replays.ts) on a SQLite file that several
// `writ serve` processes share (spec section 7: step 7, revocation, comes before step 9's stored
// answer). A process learns of its own revokes as it records them; another process's revoke shows
// only in the file. This is one cheap synchronous look at the file, made on every plain replay:
// `PRAGMA data_version` on a read-only connection of its own changes whenever any other connection
// (this process's store connection included) has committed since the last look, and only then is
// the highest revoke sequence number read again. The answer is that number: a replay may be
// answered from the table only while it is the one seen when the store last said "not revoked".
//
// A connection of its own, opened and closed with the Layer that owns it: the store's connection
// lives inside @effect/sql, which offers no synchronous statement, and a read-only WAL reader
// never waits for a writer.
import Database from "better-sqlite3"
import { Effect, type Scope } from "effect"
import { type StoreError, storeError } from "../../accounting/store-error.js"

/** The current revoke sequence number of the file, or undefined when it could not be read. */
export type RevocationMark = () => number | undefined

/**
 * Opens the watch on `filename` (after the Writ migrations created `writ_revokes`) for the life of
 * the scope.
 */
export const make = (filename: string): Effect.Effect<RevocationMark, StoreError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => new Database(filename, { readonly: true, fileMustExist: true }),
        catch: storeError("sqlite.revocationWatch", filename)
      }),
      (db) => Effect.sync(() => db.close())
    ),
    (db) => {
      const version = db.prepare("PRAGMA data_version").pluck()
      const highest = db.prepare("SELECT coalesce(max(seq), 0) FROM writ_revokes").pluck()
      let seen: number | undefined = undefined
      let mark = 0
      return () => {
        try {
          const now = Number(version.get())
          if (now !== seen) {
            mark = Number(highest.get())
            seen = now
          }
          return mark
        } catch {
          // Unreadable now: the caller takes the full path, which reads the store.
          seen = undefined
          return undefined
        }
      }
    }
  )
