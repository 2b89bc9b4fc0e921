// What the console is given, and the Layers that open it read-only. The console opens exactly the
// files named on its command line: the executor's SQLite store (--store) and the ledger's SQLite
// file (--ledger). Both are opened with SQLite's read-only flag and no migration runs, so looking
// can never change a store (an absent or unreadable file is `console/store_unavailable`).
import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Context, Effect, Layer, Option } from "effect"
import type { Policy } from "../ledger/index.js"
import * as MemoryAtomic from "../store/memory/atomic.js"
import * as MemoryLedger from "../store/memory/ledger.js"
import * as MemoryReservations from "../store/memory/reservations.js"
import { makeSqlLedger, metaFinder } from "../store/sql/ledger.js"
import { makeTransaction } from "../store/sqlite/client.js"
import { makeSqliteBackend } from "../store/sqlite/reservations.js"
import { ConsoleStore, makeConsoleStore } from "./audit.js"
import type { LedgerSources } from "./ledger-view.js"
import { consoleError, type ConsoleError } from "./reason.js"

/** The console's configuration: what it was given, by name. */
export interface ConsoleConfigShape {
  readonly store: Option.Option<string>
  readonly ledger: Option.Option<{ readonly file: string; readonly name: string }>
  readonly policy: Option.Option<{ readonly file: string; readonly policy: Policy }>
  /** Names of principals (from key files, `--keys`): each of a key's forms (did:key, ed25519:) to its name. */
  readonly names?: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

export class ConsoleConfig extends Context.Tag("mandate/console/ConsoleConfig")<ConsoleConfig, ConsoleConfigShape>() {}

/** The ledger sources, when a ledger was given. */
export class ConsoleLedger extends Context.Tag("mandate/console/ConsoleLedger")<ConsoleLedger, Option.Option<LedgerSources>>() {}

/** The executor store, when one was given. */
export class ConsoleAudit extends Context.Tag("mandate/console/ConsoleAudit")<ConsoleAudit, Option.Option<ConsoleStore["Type"]>>() {}

/** A read-only SQLite connection to an existing file, for the length of the scope. */
const readOnly = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (!exists) return yield* Effect.fail(consoleError("console/store_unavailable", "no such file (the console creates nothing)", file))
    const ctx = yield* Layer.build(SqliteClient.layer({ filename: file, readonly: true })).pipe(
      Effect.catchAllCause((cause) => Effect.fail(consoleError("console/store_unavailable", String(Cause.squash(cause)).slice(0, 300), file)))
    )
    return Context.get(ctx, SqlClient.SqlClient)
  })

const memory = Layer.mergeAll(MemoryReservations.layerWithJournal, MemoryLedger.layer).pipe(Layer.provideMerge(MemoryAtomic.layer))

/** ConsoleAudit and ConsoleLedger for what ConsoleConfig names, opened read-only in the Layer's scope. */
export const sourcesLayer: Layer.Layer<ConsoleAudit | ConsoleLedger, ConsoleError, ConsoleConfig | FileSystem.FileSystem> = Layer.scopedContext(
  Effect.gen(function*() {
    const config = yield* ConsoleConfig
    let audit: Option.Option<ConsoleStore["Type"]> = Option.none()
    if (Option.isSome(config.store)) {
      const file = config.store.value
      audit = Option.some(yield* Effect.flatMap(readOnly(file), (sql) => Effect.provideService(makeConsoleStore(file), SqlClient.SqlClient, sql)))
    }
    let ledger: Option.Option<LedgerSources> = Option.none()
    if (Option.isSome(config.ledger)) {
      const { file, name } = config.ledger.value
      const sql = yield* readOnly(file)
      // The transaction boundary is the store's own, but only appends use it, and the console never appends.
      const transaction = makeTransaction(sql, file)
      const store = makeSqlLedger(sql, transaction, name, metaFinder(sql, false))
      const usage = makeSqliteBackend(sql, transaction)
      const page = (after: number, limit: number) =>
        sql.unsafe(`SELECT seq, line FROM ledger_lines WHERE ledger = ? AND seq > ? ORDER BY seq LIMIT ${Math.max(1, Math.floor(limit))}`, [name, after]).pipe(
          Effect.map((rows) => (rows as ReadonlyArray<{ seq: number | bigint; line: string }>).map((r) => ({ seq: Number(r.seq), line: r.line }))),
          Effect.mapError((e) => consoleError("console/store_unavailable", e.message.slice(0, 300), file))
        )
      ledger = Option.some({
        name,
        store,
        used: usage.used,
        memory,
        page,
        ...(Option.isSome(config.policy) ? { policy: config.policy.value } : {})
      })
    }
    return Context.make(ConsoleAudit, audit).pipe(Context.add(ConsoleLedger, ledger))
  })
)
