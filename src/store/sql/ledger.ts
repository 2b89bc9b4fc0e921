// The SQL ledger store shared by SQLite and PostgreSQL: lines, one head row per ledger, and the
// held-reservations index. Appends run inside the store's atomic step; what holds the head against
// other writers differs (SQLite: the file's write lock, taken by the step's first statement;
// PostgreSQL: the head row locked FOR UPDATE), passed in as `lockHead`. An append is three or four
// statements whatever the number of lines: the head, the lines, the held index, the new head.
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema, Stream } from "effect"
import type { AtomicService } from "../../accounting/reservations.js"
import { type StoreError, storeError } from "../../accounting/store-error.js"
import { LedgerMode } from "../../ledger/events.js"
import { heldPseudonyms, keyCheck, type TelemetryKey } from "../../ledger/privacy.js"
import { ledgerError, type LedgerError } from "../../ledger/reason.js"
import { type Head, type LedgerBackend, type LedgerInfo, lineHash, type StoredLine } from "../../ledger/writer.js"
import type { StoreMigrations } from "./migrations.js"

export const ledgerMigrations: StoreMigrations = {
  table: "mandate_migrations_ledger",
  migrations: {
    "1_ledger": [
      `CREATE TABLE ledger_meta (ledger TEXT PRIMARY KEY, mode TEXT NOT NULL, key_hex TEXT NOT NULL,
        head_seq BIGINT NOT NULL, head_hash TEXT)`,
      `CREATE TABLE ledger_lines (ledger TEXT NOT NULL, seq BIGINT NOT NULL, hash TEXT NOT NULL, line TEXT NOT NULL,
        PRIMARY KEY (ledger, seq))`,
      `CREATE TABLE ledger_held (ledger TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL, action_id TEXT NOT NULL,
        run_id TEXT NOT NULL, PRIMARY KEY (ledger, id))`,
      `CREATE INDEX ledger_held_owner ON ledger_held (ledger, owner)`
    ],
    // The safe_telemetry key leaves the store: only a check of it is kept (privacy.ts keyCheck).
    // key_hex stays for ledgers written before, until the key is moved out (moveKeyOut).
    "2_ledger_key_check": [
      `ALTER TABLE ledger_meta ADD COLUMN key_check TEXT NOT NULL DEFAULT ''`
    ]
  }
}

/** A ledger_meta row. */
export const MetaRow = Schema.Struct({
  ledger: Schema.String,
  mode: LedgerMode,
  key_hex: Schema.String,
  key_check: Schema.String,
  head_seq: Schema.Union(Schema.Number, Schema.NumberFromString),
  head_hash: Schema.NullOr(Schema.String)
})

/** Reads the head row of `ledger` with `suffix` appended to the SELECT (e.g. FOR UPDATE). */
export const metaFinder = (sql: SqlClient.SqlClient, lock: boolean) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: MetaRow,
    execute: (l) => lock
      ? sql`SELECT ledger, mode, key_hex, key_check, head_seq, head_hash FROM ledger_meta WHERE ledger = ${l} FOR UPDATE`
      : sql`SELECT ledger, mode, key_hex, key_check, head_seq, head_hash FROM ledger_meta WHERE ledger = ${l}`
  })

const HeldRow = Schema.Struct({ id: Schema.String, action_id: Schema.String, run_id: Schema.String })
const LineRow = Schema.Struct({ seq: Schema.Union(Schema.Number, Schema.NumberFromString), hash: Schema.String, line: Schema.String })

const op = <A, E>(name: string, eff: Effect.Effect<A, E>): Effect.Effect<A, StoreError | Extract<E, LedgerError>> =>
  Effect.mapError(eff, (e) => (typeof e === "object" && e !== null && "_tag" in e && (e._tag === "LedgerError" || e._tag === "StoreError") ? e : storeError(`ledger.${name}`)(e))) as never

const HeldFullRow = Schema.Struct({ id: Schema.String, owner: Schema.String, action_id: Schema.String, run_id: Schema.String })

/**
 * Moves the key of a ledger written before it left the store out of it, as one atomic step: the
 * stored key is replaced by its check, and the held-reservations rows, which kept raw owner, action
 * and run ids then, take the pseudonyms the lines use. The old values stay as residue in free pages
 * (or older row versions) until the caller compacts the store (SQLite: client.ts `scrub`).
 */
export const moveKeyOut = (sql: SqlClient.SqlClient, transaction: AtomicService["transaction"], ledger: string, key: TelemetryKey): Effect.Effect<void, StoreError> =>
  op("moveKeyOut", transaction(Effect.gen(function*() {
    const rows = yield* SqlSchema.findAll({
      Request: Schema.String,
      Result: HeldFullRow,
      execute: (l) => sql`SELECT id, owner, action_id, run_id FROM ledger_held WHERE ledger = ${l}`
    })(ledger)
    const pseudo = heldPseudonyms(key)
    for (const r of rows) {
      const p = pseudo(r)
      yield* sql`UPDATE ledger_held SET owner = ${p.owner}, action_id = ${p.action_id}, run_id = ${p.run_id} WHERE ledger = ${ledger} AND id = ${r.id}`
    }
    yield* sql`UPDATE ledger_meta SET key_hex = '', key_check = ${keyCheck(key)} WHERE ledger = ${ledger}`
  })))

/** Lines are read in pages so that a long ledger streams in bounded memory. */
const PAGE = 1000

export const makeSqlLedger = (
  sql: SqlClient.SqlClient,
  transaction: AtomicService["transaction"],
  ledger: string,
  /** Reads the ledger's head row and holds it against other writers until the atomic step ends. */
  lockHead: (ledger: string) => Effect.Effect<Option.Option<typeof MetaRow.Type>, unknown>
): LedgerBackend => {
  const findMeta = metaFinder(sql, false)
  const findHeld = SqlSchema.findAll({
    Request: Schema.String,
    Result: HeldRow,
    execute: (owner) => sql`SELECT id, action_id, run_id FROM ledger_held WHERE ledger = ${ledger} AND owner = ${owner} ORDER BY id`
  })
  const page = SqlSchema.findAll({
    Request: Schema.Number,
    Result: LineRow,
    execute: (after) => sql`SELECT seq, hash, line FROM ledger_lines WHERE ledger = ${ledger} AND seq > ${after} ORDER BY seq LIMIT ${PAGE}`
  })
  const insertLines = (ls: ReadonlyArray<StoredLine>) =>
    Effect.gen(function*() {
      // One statement for the lines, one for the held index (at most), whatever their number.
      yield* sql`INSERT INTO ledger_lines ${sql.insert(ls.map((l) => ({ ledger, seq: l.seq, hash: l.hash, line: l.line })))}`
      const holds = ls.flatMap((l) => (l.hold !== undefined ? [{ ledger, id: l.hold.id, owner: l.hold.owner, action_id: l.hold.action_id, run_id: l.hold.run_id }] : []))
      if (holds.length > 0) yield* sql`INSERT INTO ledger_held ${sql.insert(holds)}`
      const settles = ls.flatMap((l) => (l.settle !== undefined ? [l.settle] : []))
      if (settles.length > 0) yield* sql`DELETE FROM ledger_held WHERE ledger = ${ledger} AND ${sql.in("id", settles)}`
    })
  const headOf = (m: typeof MetaRow.Type): Head => ({ seq: Number(m.head_seq), hash: m.head_hash })
  return {
    info: op("info", Effect.map(findMeta(ledger), Option.map((m): LedgerInfo => ({
      ledger: m.ledger,
      mode: m.mode,
      // Set only in a ledger written before the key moved out of the store (moveKeyOut).
      key: m.key_hex.length > 0 ? new Uint8Array(Buffer.from(m.key_hex, "hex")) : undefined,
      keyCheck: m.key_check
    })))),
    create: (info, header) =>
      op("create", transaction(Effect.gen(function*() {
        const existing = yield* findMeta(info.ledger)
        if (Option.isSome(existing)) return yield* ledgerError("ledger_exists", `ledger ${info.ledger} already exists`)
        // Never the key itself: it stays outside the store (privacy.ts), and the check tells it from another.
        yield* sql`INSERT INTO ledger_meta (ledger, mode, key_hex, key_check, head_seq, head_hash)
          VALUES (${info.ledger}, ${info.mode}, '', ${info.key === undefined ? "" : keyCheck(info.key)}, ${header.seq}, ${header.hash})`
        yield* insertLines([header])
      }))),
    append: (build) =>
      op("append", transaction(Effect.gen(function*() {
        const meta = yield* lockHead(ledger)
        if (Option.isNone(meta)) return yield* ledgerError("ledger_missing", `no ledger ${ledger} in this store`)
        const lines = build(headOf(meta.value))
        if (lines.length === 0) return
        yield* insertLines(lines)
        const last = lines[lines.length - 1]
        yield* sql`UPDATE ledger_meta SET head_seq = ${last.seq}, head_hash = ${last.hash} WHERE ledger = ${ledger}`
      }))),
    // Each row's stored hash is checked against its line as it is read: the column is the store's
    // record of the chain beside the lines, so an edited column is tampering like an edited line.
    lines: Stream.paginateEffect(-1, (after: number) =>
      op("lines", Effect.flatMap(page(after), (rows) => {
        const bad = rows.find((r) => lineHash(r.line) !== r.hash)
        return bad !== undefined
          ? Effect.fail(ledgerError("chain_broken", `the stored hash (${bad.hash}) is not the hash of its line`, `line ${Number(bad.seq) + 1}`))
          : Effect.succeed([rows.map((r) => r.line), rows.length < PAGE ? Option.none() : Option.some(Number(rows[rows.length - 1].seq))] as const)
      }))).pipe(Stream.flatMap((lines) => Stream.fromIterable(lines))),
    head: op("head", Effect.flatMap(findMeta(ledger), (m) =>
      Option.isNone(m) ? Effect.fail(ledgerError("ledger_missing", `no ledger ${ledger}`)) : Effect.succeed(headOf(m.value)))),
    held: (owner) => op("held", findHeld(owner))
  }
}
