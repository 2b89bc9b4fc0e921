// The executor's section 9.3 audit record and its call store, read page by page from its SQLite
// file. Every query is a keyset query (WHERE (key, seq) beyond the last row seen ORDER BY key, seq
// LIMIT n), so a page costs the rows it returns plus the rows its filter skips, never the whole
// table: a store of millions of entries opens on its first page. The store is opened read-only
// (src/console/stores.ts); nothing here writes.
//
// Limitation: the audit table indexes only `seq` (its key) and holds each entry as JSON text;
// sorting by time uses the `time` column, sorting or filtering by another member reads
// json_extract over the rows it passes, so a rare filter value scans until it fills a page.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Schema } from "effect"
import {
  AuditQuery, type AuditPage, type AuditRowView, type AuditSort, AuditTableRow, CallSummary, type CallList,
  StoredAuditEntry, type StoreLimits
} from "./api.js"
import { consoleError, type ConsoleError, parseDetail } from "./reason.js"
import type { SpendEntry } from "./spend.js"

export const PAGE_DEFAULT = 100

/** The SQL expression each sort key orders by (fixed text: never built from input). */
const sortExpr: Record<AuditSort, string> = {
  seq: "seq",
  time: "time",
  kind: "COALESCE(json_extract(entry, '$.kind'), '')",
  outcome: "COALESCE(json_extract(entry, '$.outcome'), '')",
  reason: "COALESCE(json_extract(entry, '$.reason'), '')",
  op: "COALESCE(json_extract(entry, '$.op'), '')",
  principal: "COALESCE(json_extract(entry, '$.principal'), '')"
}

/** A page cursor: the last row's sort value and seq, as JSON text. */
const Cursor = Schema.parseJson(Schema.Tuple(Schema.Union(Schema.String, Schema.Int), Schema.Int))
const decodeCursor = Schema.decodeUnknown(Cursor)
const encodeCursor = Schema.encodeSync(Cursor)

interface Where { readonly clauses: Array<string>; readonly params: Array<string | number> }

/** The filters of `q` as SQL (bound parameters only). `op` matches by section 3.1 prefix rules. */
export const whereOf = (q: AuditQuery): Where => {
  const clauses: Array<string> = []
  const params: Array<string | number> = []
  const eq = (member: string, v: string | undefined) => {
    if (v === undefined || v === "") return
    clauses.push(`json_extract(entry, '$.${member}') = ?`)
    params.push(v)
  }
  eq("kind", q.kind)
  eq("outcome", q.outcome)
  eq("reason", q.reason)
  eq("principal", q.principal)
  if (q.op !== undefined && q.op !== "") {
    // s === p, or p ends with "/" and s starts with p, or s starts with p + "/" (section 3.1).
    const p = q.op
    const prefix = p.endsWith("/") ? p : `${p}/`
    clauses.push(`(json_extract(entry, '$.op') = ? OR substr(json_extract(entry, '$.op'), 1, ?) = ?)`)
    params.push(p, prefix.length, prefix)
  }
  if (q.since !== undefined) { clauses.push("time >= ?"); params.push(q.since) }
  if (q.until !== undefined) { clauses.push("time < ?"); params.push(q.until) }
  return { clauses, params }
}

const decodeRow = (r: unknown): Effect.Effect<AuditRowView, ConsoleError> =>
  Effect.gen(function*() {
    const row = yield* Schema.decodeUnknown(AuditTableRow)(r)
    const entry = yield* Schema.decodeUnknown(StoredAuditEntry)(row.entry)
    return { seq: row.seq, ...entry }
  }).pipe(Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/store_unavailable", `an audit row does not decode: ${e.message.slice(0, 200)}`, "writ_audit"))))

export interface ConsoleStoreService {
  readonly file: string
  readonly auditPage: (q: AuditQuery) => Effect.Effect<AuditPage, ConsoleError>
  readonly auditCount: (q: AuditQuery) => Effect.Effect<number, ConsoleError>
  readonly calls: (after: string | undefined, limit: number) => Effect.Effect<CallList, ConsoleError>
  /** The executor's `count` and `total` stores (section 9: `writ/count/<writ>`, `writ/total/<writ>/<bound>`), a page at a time. */
  readonly limits: (after: string | undefined, limit: number) => Effect.Effect<StoreLimits, ConsoleError>
  /** The stored tally (and body) of one call, as the JSON of an answer file (section 10). */
  readonly answer: (leaf: string, id: string) => Effect.Effect<{ readonly tally: string; readonly res: string | null }, ConsoleError>
  /** What each final call consumed (its tally's `used`, section 6), by the `from` its audit entry names. */
  readonly callSpend: Effect.Effect<ReadonlyArray<SpendEntry>, ConsoleError>
}

/** A tally's `used`: bound name to the integer consumed (section 6). */
const Used = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Int }))
const SpendRow = Schema.Struct({ leaf: Schema.String, acc: Schema.Int, used: Schema.String, principal: Schema.NullOr(Schema.String) })

export class ConsoleStore extends Context.Tag("mandate/console/ConsoleStore")<ConsoleStore, ConsoleStoreService>() {}

const storeFailed = (file: string) => (e: { readonly message: string }) => consoleError("console/store_unavailable", e.message.slice(0, 300), file)

/** The ConsoleStore on the SqlClient in context (an executor's SQLite store, opened read-only). */
export const makeConsoleStore = (file: string) => Effect.map(SqlClient.SqlClient, (sql): ConsoleStoreService => {
  const query = (text: string, params: ReadonlyArray<string | number>) =>
    sql.unsafe(text, params).pipe(Effect.mapError(storeFailed(file)))
  return {
    file,
    auditPage: Effect.fn("console.auditPage")(function*(q: AuditQuery) {
      const sort = q.sort ?? "seq"
      const dir = q.dir ?? "asc"
      const limit = q.limit ?? PAGE_DEFAULT
      const expr = sortExpr[sort]
      const w = whereOf(q)
      if (q.after !== undefined && q.after !== "") {
        const [v, seq] = yield* decodeCursor(q.after).pipe(Effect.catchTag("ParseError", () => Effect.fail(consoleError("console/bad_request", "the page cursor does not decode", "after"))))
        const cmp = dir === "asc" ? ">" : "<"
        if (sort === "seq") { w.clauses.push(`seq ${cmp} ?`); w.params.push(seq) }
        else { w.clauses.push(`(${expr}, seq) ${cmp} (?, ?)`); w.params.push(v, seq) }
      }
      const where = w.clauses.length === 0 ? "" : `WHERE ${w.clauses.join(" AND ")}`
      const order = sort === "seq" ? `seq ${dir}` : `${expr} ${dir}, seq ${dir}`
      const raw = yield* query(`SELECT seq, entry, ${expr} AS k FROM writ_audit ${where} ORDER BY ${order} LIMIT ${limit + 1}`, w.params)
      const page = raw.slice(0, limit)
      const rows = yield* Effect.forEach(page, (r) => decodeRow({ seq: (r as { seq: unknown }).seq, entry: (r as { entry: unknown }).entry }))
      const last = page[page.length - 1] as { k: string | number; seq: number } | undefined
      return { rows, next: raw.length > limit && last !== undefined ? encodeCursor([last.k, last.seq]) : null }
    }),
    auditCount: Effect.fn("console.auditCount")(function*(q: AuditQuery) {
      const w = whereOf(q)
      const rows = yield* query(`SELECT count(*) AS n FROM writ_audit ${w.clauses.length === 0 ? "" : `WHERE ${w.clauses.join(" AND ")}`}`, w.params)
      return Number((rows[0] as { n: number }).n)
    }),
    calls: Effect.fn("console.calls")(function*(after: string | undefined, limit: number) {
      const from = after === undefined || after === "" ? 0 : Number.parseInt(after, 10)
      if (!Number.isSafeInteger(from)) return yield* Effect.fail(consoleError("console/bad_request", "the page cursor is not a row number", "after"))
      const raw = yield* query(
        `SELECT rowid AS r, leaf, id, op, acc, state, json_extract(tally, '$.st') AS st, json_extract(tally, '$.err.code') AS reason
         FROM writ_calls WHERE rowid > ? ORDER BY rowid LIMIT ${limit + 1}`, [from])
      const page = raw.slice(0, limit)
      const calls = yield* Effect.forEach(page, (r) => Schema.decodeUnknown(CallSummary)(r, { onExcessProperty: "ignore" })).pipe(
        Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/store_unavailable", `a call row does not decode: ${e.message.slice(0, 200)}`, "writ_calls"))))
      const last = page[page.length - 1] as { r: number } | undefined
      return { calls, next: raw.length > limit && last !== undefined ? String(last.r) : null }
    }),
    limits: Effect.fn("console.storeLimits")(function*(after: string | undefined, limit: number) {
      // Usage is keyed; the limit is the one the executor reserved against, taken from the newest
      // reservation naming the key (the limit of a key never changes: it is the writ's bound).
      const raw = yield* query(
        `SELECT u.key AS key, u.used AS used,
           (SELECT j.value ->> 1 FROM accounting_reservations r, json_each(r.limits) j
             WHERE j.value ->> 0 = u.key ORDER BY r.rowid DESC LIMIT 1) AS lim
         FROM accounting_usage u WHERE u.key > ? AND (u.key LIKE 'writ/count/%' OR u.key LIKE 'writ/total/%')
         ORDER BY u.key LIMIT ${limit + 1}`, [after ?? ""])
      const page = raw.slice(0, limit) as Array<{ key: string; used: string | number; lim: string | null }>
      const limits = page.map((r) => {
        const used = BigInt(r.used)
        const lim = r.lim === null ? null : BigInt(r.lim)
        return {
          key: r.key,
          unit: r.key.startsWith("writ/count/") ? "uses" : r.key.split("/").slice(3).join("/"),
          limit: lim === null ? "?" : lim.toString(),
          used: used.toString(),
          remaining: lim === null ? "?" : (lim > used ? lim - used : 0n).toString()
        }
      })
      return { limits, next: raw.length > limit && page.length > 0 ? page[page.length - 1].key : null }
    }),
    callSpend: Effect.suspend(() => query(
      // The caller of each call is the `from` its audit entries name (the call store keeps the
      // call's identity only); a call with no audit entry is counted under "-".
      `WITH p AS (SELECT json_extract(entry, '$.identity') AS id, max(json_extract(entry, '$.principal')) AS principal
         FROM writ_audit WHERE json_extract(entry, '$.kind') = 'call' AND json_extract(entry, '$.identity') IS NOT NULL GROUP BY 1)
       SELECT c.leaf AS leaf, c.acc AS acc, json_extract(c.tally, '$.used') AS used, p.principal AS principal
       FROM writ_calls c LEFT JOIN p ON p.id = c.call
       WHERE c.state = 'final' AND c.tally IS NOT NULL AND json_extract(c.tally, '$.used') IS NOT NULL`, [])).pipe(
      Effect.flatMap((rows) => Effect.forEach(rows, (r) => Effect.gen(function*() {
        const row = yield* Schema.decodeUnknown(SpendRow)(r, { onExcessProperty: "ignore" })
        const used = yield* Schema.decodeUnknown(Used)(row.used)
        const at = new Date(row.acc * 1000).toISOString()
        return Object.keys(used).sort().filter((name) => used[name] !== 0).map((name): SpendEntry => ({
          at, source: "store", protocol: "writ", principal: row.principal ?? "-",
          budget: `${name} of writ ${row.leaf.slice(0, 8)}`, unit: `writ:${name}`, amount: { units: BigInt(used[name]), scale: 0 }
        }))
      }).pipe(Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/store_unavailable", `a call's tally does not decode: ${parseDetail(e)}`, "writ_calls")))))),
      Effect.map((xs) => xs.flat()),
      Effect.withSpan("console.callSpend")
    ),
    answer: Effect.fn("console.answer")(function*(leaf: string, id: string) {
      const rows = yield* query(`SELECT tally, res FROM writ_calls WHERE leaf = ? AND id = ?`, [leaf, id])
      const row = rows[0] as { tally: string | null; res: string | null } | undefined
      if (row === undefined || row.tally === null) return yield* Effect.fail(consoleError("console/not_found", "no final call with this leaf and id in the store", `${leaf}/${id}`))
      return { tally: row.tally, res: row.res }
    })
  }
})

export const decodeAuditQuery = (params: Record<string, string>): Effect.Effect<AuditQuery, ConsoleError> =>
  Schema.decodeUnknown(AuditQuery, { onExcessProperty: "error" })(
    Object.fromEntries(Object.entries(params).filter(([, v]) => v !== ""))
  ).pipe(Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/bad_request", parseDetail(e), "query"))))
