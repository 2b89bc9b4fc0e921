// What reaches disk in each ledger mode (seed "Decision Ledger": safe_telemetry "pseudonymizes
// identifiers with a local key"). Unique marker strings are planted as every identifier a guarded
// action, the Writ executor and the YEA runtime hand to a SQLite ledger; the raw bytes of the
// file, its -wal and -shm and of the exports are then scanned. In safe_telemetry no marker and no
// byte of the key may be found; in local_full the markers are there (so the scan can fail).
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import { existsSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { DecisionEvents } from "../../src/accounting/decision-events.js"
import * as LedgerOpen from "../../src/app/ledger-open.js"
import { openLedger, openStores, parseLocation, recordDecisions } from "../../src/app/ledger-open.js"
import { RandomBytes } from "../../src/kernel/index.js"
import {
  aggregate, compose, createLedger, dedup, GuardAbort, type LedgerEvent, LedgerStore, LedgerWriter, type LedgerMode, makeGuard,
  readLedger, tokenBudget, usdBudget, type Usd
} from "../../src/ledger/index.js"
import { publishAccepted } from "../../src/writ/executor/decisions.js"
import type { ExecutorEnv } from "../../src/writ/executor/state.js"
import { publishReply } from "../../src/yea/service/decisions.js"
import { pgReachable } from "../accounting/pg.js"
import { runCli } from "../support/cli.js"
import { cost } from "./harness.js"

// Looked up, not imported by name, so that this file also runs (and fails) on code without it.
const initLedger = (LedgerOpen as unknown as { initLedger: typeof LedgerOpen.initLedger }).initLedger

// Each marker names what it is planted as; none can occur in a pseudonym, a hash or a number by chance.
const M = {
  action: "MKxActionZq1", action2: "MKxActionZq2", action3: "MKxActionZq3", held: "MKxHeldActZq",
  run: "MKxRunZq", owner: "MKxOwnerZq", principal: "MKxPrincipalZq", task: "MKxTaskZq", state: "MKxStateZq", phase: "MKxPhaseZq",
  meta: "MKxMetaValueZq", writ: "MKxWritZ", total: "MKxTotalZq", writPrincipal: "MKxWritFromZq", callId: "MKxCallIdZq", op: "MKxOpZq",
  app: "mkxappzq", unit: "MKxUnitZq", proposal: "MKxProposalZq", requester: "MKxRequesterZq", capability: "MKxCapZq",
  namespace: "MKxNamespaceZq"
}
const markers = Object.values(M)

const tmp = () => mkdtempSync(join(tmpdir(), "mandate-ledger-privacy-"))
const bytes = (path: string): Buffer => (existsSync(path) ? readFileSync(path) : Buffer.alloc(0))
/** What is on disk of a SQLite ledger right now: the file, its WAL and its shared memory index. */
const onDisk = (file: string): Record<string, Buffer> => ({ file: bytes(file), wal: bytes(`${file}-wal`), shm: bytes(`${file}-shm`) })
const found = (files: Record<string, Buffer>, needle: string | Buffer): Array<string> =>
  Object.entries(files).filter(([, b]) => b.includes(needle)).map(([name]) => name)

const KEY = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff)
const keyHex = Buffer.from(KEY).toString("hex")

const ops = { ledger: "privacy" } as const

/** Guarded actions on the ledger at `file`: committed, aborted (released), failed, and one left held while `scan` runs. */
const guarded = <E, R>(scan: Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const guard = yield* makeGuard({
      mode: "enforce", namespace: M.namespace, runId: M.run, owner: M.owner,
      policy: compose(usdBudget("100" as Usd), tokenBudget(1_000_000n), dedup("exact"))
    })
    const act = (id: string, extra = {}) => ({
      id, kind: "tool.search", metadata: { q: M.meta }, estimate: cost(10, "0.10"),
      principal: M.principal, task_id: M.task, state: M.state, phase: M.phase, ...extra
    })
    yield* guard.guard(act(M.action), Effect.succeed({ value: 1, actual: cost(8, "0.08") }))
    yield* Effect.exit(guard.guard(act(M.action2, { metadata: { q: `${M.meta}2` } }), Effect.fail(new GuardAbort({ detail: "no" }))))
    yield* Effect.exit(guard.guard(act(M.action3, { metadata: { q: `${M.meta}3` } }), Effect.fail(new Error("boom"))))
    // One reservation stays held while the files are scanned (a worker mid-action, or one that died).
    const started = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(guard.guard(act(M.held, { metadata: { q: `${M.meta}4` } }), Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)))
    yield* Deferred.await(started)
    const writer = yield* LedgerWriter
    expect((yield* writer.held(M.owner)).length).toBe(1)
    yield* scan
    // recover() settles it from the held index: the settlement names the same action as its reservation.
    expect(yield* guard.recover).toBe(1)
    yield* Fiber.interrupt(fiber)
  })

/** What the Writ executor and the YEA runtime publish, recorded into the ledger at `file`. */
const protocols = Effect.gen(function*() {
  const sink = yield* DecisionEvents
  const env = { decisions: sink } as unknown as ExecutorEnv
  yield* publishAccepted(env, { principal: M.writPrincipal, subject: M.callId, op: M.op }, [
    { key: `writ/count/${M.writ}aaaaaaaa`, limit: 5n, amount: 1n },
    { key: `writ/total/${M.writ}aaaaaaaa/${M.total}`, limit: 500n, amount: 40n }
  ])
  const frame = { verb: "COMMIT", proposal: M.proposal } as never
  const body = { kind: "RECEIPT", receipt: { proposal: M.proposal, capability: M.capability, uses: { [M.app]: { amount: 3, unit: M.unit } } } } as never
  yield* publishReply(sink, frame, M.requester, body)
})

const exports = (file: string, options: LedgerOpen.OpenOptions) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const lines = Array.from(yield* Stream.runCollect(store.lines))
    const events: Array<LedgerEvent> = Array.from(yield* Stream.runCollect(readLedger(Stream.fromIterable(lines))))
    const agg = yield* aggregate(Stream.fromIterable(events), 1)
    const jsonl = join(file + ".export.jsonl")
    const aggFile = join(file + ".aggregate.json")
    writeFileSync(jsonl, lines.join("\n") + "\n")
    writeFileSync(aggFile, JSON.stringify(agg) + "\n")
    return { events, files: { jsonl: bytes(jsonl), aggregate: bytes(aggFile) } }
  }).pipe(Effect.provide(openStores(parseLocation(file), options)))

/** Creates a ledger in `mode` at `file` with the test's key, then runs everything above on it. */
const scenario = (mode: LedgerMode) =>
  Effect.gen(function*() {
    const file = join(tmp(), "ledger.sqlite")
    const where = parseLocation(file)
    const options: LedgerOpen.OpenOptions = { ...ops, key: KEY } as LedgerOpen.OpenOptions
    yield* createLedger({ ledger: ops.ledger, mode, key: mode === "safe_telemetry" ? KEY : undefined }).pipe(Effect.provide(openStores(where, options)))
    const scans: Array<Record<string, Buffer>> = []
    yield* guarded(Effect.sync(() => void scans.push(onDisk(file)))).pipe(Effect.provide(Layer.merge(openLedger(where, options), RandomBytes.live)))
    yield* Effect.scoped(Effect.gen(function*() {
      const ctx = yield* Layer.build(recordDecisions(where, options))
      yield* Effect.provide(protocols, ctx)
      scans.push(onDisk(file))
    }))
    scans.push(onDisk(file))
    const out = yield* exports(file, options)
    return { file, scans, ...out }
  })

describe("ledger privacy on disk", () => {
  it.effect("safe_telemetry: no marker and no key byte in the file, its WAL and shm, or the exports", () =>
    Effect.gen(function*() {
      const { scans, files, events } = yield* scenario("safe_telemetry")
      const all = [...scans, files]
      // Every leak at once, named by marker and where (scan: 0 held, 1 protocols recorded, 2 closed; then the exports).
      const leaks = markers.flatMap((m) => all.flatMap((s, i) => found(s, m).map((f) => `${m} in ${i < scans.length ? `scan ${i} ` : ""}${f}`)))
      expect(leaks).toEqual([])
      for (const s of all) {
        expect(found(s, keyHex)).toEqual([])
        expect(found(s, Buffer.from(KEY))).toEqual([])
      }
      // The ledger still correlates: the recovered settlement names the held action's pseudonym.
      const heldRes = events.filter((e) => e.type === "reservation").at(-1)!
      const recovered = events.find((e) => e.type === "settlement" && e.reason === "recovered_after_crash")!
      expect(recovered.type === "settlement" && heldRes.type === "reservation" && [recovered.action_id, recovered.run_id]).toEqual([heldRes.action_id, heldRes.run_id])
      // Writ draw names keep their kind and a per-writ part (stats groups them as before).
      const consumed = events.flatMap((e) => (e.type === "protocol" && e.decision.kind === "consumed" ? e.decision.amounts ?? [] : []))
      expect(consumed.map((a) => a.name)).toEqual([expect.stringMatching(/^count:[A-Za-z0-9_-]{8}$/), expect.stringMatching(/^total:p_[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{8}$/)])
    }), 60_000)

  it.effect("local_full: the same markers do reach the file and the export (the scan can fail)", () =>
    Effect.gen(function*() {
      const { scans, files } = yield* scenario("local_full")
      const all = [...scans, files]
      for (const m of markers) {
        expect({ marker: m, found: all.some((s) => found(s, m).length > 0) }).toEqual({ marker: m, found: true })
      }
      // The held index is on disk while the action runs: its action, run and owner ids are raw here.
      for (const m of [M.held, M.run, M.owner]) expect(found(scans[0], m)).not.toEqual([])
    }), 60_000)
})

describe("the pseudonym key lives outside the ledger", () => {

  it.effect("init writes a 0600 key file beside the ledger, not inside it; pseudonyms are stable across reopen", () =>
    Effect.gen(function*() {
      const file = join(tmp(), "l.sqlite")
      const where = parseLocation(file)
      yield* initLedger(where, { ledger: "k", mode: "safe_telemetry" })
      const keyFile = `${file}.key`
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      const key = Buffer.from(readFileSync(keyFile, "utf8").trim(), "hex")
      expect(key.length).toBe(32)
      const write = Effect.flatMap(LedgerWriter, (w) => w.append([{ type: "failure", run_id: M.run, action_id: M.action, error: "E", measured: false }]))
      yield* Effect.provide(write, openLedger(where, { ledger: "k" }))
      yield* Effect.provide(write, openLedger(where, { ledger: "k" }))
      const { events } = yield* exports(file, { ledger: "k" })
      const failures = events.flatMap((e) => (e.type === "failure" ? [[e.run_id, e.action_id]] : []))
      expect(failures.length).toBe(2)
      expect(failures[0]).toEqual(failures[1])
      expect(failures[0][0]).toMatch(/^p_/)
      for (const where of [file, `${file}-wal`]) {
        expect(bytes(where).includes(key)).toBe(false)
        expect(bytes(where).includes(key.toString("hex"))).toBe(false)
      }
    }), 60_000)

  it.effect("a safe_telemetry ledger opened without its key, or with another, is refused with its reason", () =>
    Effect.gen(function*() {
      const dir = tmp()
      const file = join(dir, "l.sqlite")
      const where = parseLocation(file)
      yield* initLedger(where, { ledger: "k", mode: "safe_telemetry", key: KEY })
      // A provided secret is not written anywhere: no key file appears.
      expect(existsSync(`${file}.key`)).toBe(false)
      const open = (o: LedgerOpen.OpenOptions) => Effect.exit(Effect.provide(Effect.asVoid(LedgerWriter), openLedger(where, o)))
      const reasonOf = (exit: Exit.Exit<void, unknown>): string =>
        Exit.isSuccess(exit) ? "opened" : Option.match(Cause.failureOption(exit.cause), {
          onNone: () => "defect",
          onSome: (e) => (e as { reason?: string; _tag?: string }).reason ?? String((e as { _tag?: string })._tag)
        })
      expect(reasonOf(yield* open({ ledger: "k" }))).toBe("key_missing")
      expect(reasonOf(yield* open({ ledger: "k", key: new Uint8Array(32).fill(1) }))).toBe("key_mismatch")
      writeFileSync(join(dir, "other.key"), "not a key\n", { mode: 0o600 })
      expect(reasonOf(yield* open({ ledger: "k", keyFile: join(dir, "other.key") }))).toBe("key_invalid")
      expect(reasonOf(yield* open({ ledger: "k", key: KEY }))).toBe("opened")
      // Nothing was generated in its place.
      expect(existsSync(`${file}.key`)).toBe(false)
    }), 60_000)

  it.effect("a ledger that kept its key inside the store: the key moves to the key file, raw held ids and residue go", () =>
    Effect.gen(function*() {
      const file = join(tmp(), "old.sqlite")
      const where = parseLocation(file)
      // The layout an earlier version wrote: the key in ledger_meta, raw ids in the held index, and a
      // settled reservation's deleted row left in a free page (secure_delete was off).
      yield* Effect.gen(function*() {
        yield* createLedger({ ledger: "old", mode: "safe_telemetry", key: KEY })
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe("PRAGMA secure_delete = OFF")
        yield* sql`UPDATE ledger_meta SET key_hex = ${keyHex}, key_check = '' WHERE ledger = 'old'`
        yield* sql`INSERT INTO ledger_held (ledger, id, owner, action_id, run_id) VALUES ('old', 'r-1', ${M.owner}, ${M.held}, ${M.run})`
        yield* sql`INSERT INTO ledger_held (ledger, id, owner, action_id, run_id) VALUES ('old', 'r-2', ${M.owner}, ${M.action}, ${M.run})`
        yield* sql`DELETE FROM ledger_held WHERE id = 'r-2'`
        // Many settled at once: whole pages of raw rows on the free list.
        for (let i = 0; i < 300; i++) {
          yield* sql`INSERT INTO ledger_held (ledger, id, owner, action_id, run_id) VALUES ('old', ${`r-x${i}`}, ${M.owner}, ${`${M.action2}-${i}`}, ${M.run})`
        }
        yield* sql`DELETE FROM ledger_held WHERE id LIKE 'r-x%'`
      }).pipe(Effect.provide(openStores(where, { ledger: "old" })))
      const before = onDisk(file)
      expect([keyHex, M.held, M.action2, M.owner].map((m) => found(before, m).length > 0)).toEqual([true, true, true, true])
      // Another key than the stored one is refused, and nothing is moved.
      const refused = yield* Effect.exit(Effect.provide(Effect.asVoid(LedgerWriter), openLedger(where, { ledger: "old", key: new Uint8Array(32).fill(3) })))
      expect(Exit.isFailure(refused) && Option.getOrUndefined(Cause.failureOption(refused.cause))).toMatchObject({ reason: "key_mismatch" })
      expect(existsSync(`${file}.key`)).toBe(false)
      // Opened for writing with no key given: the key moves out to FILE.key.
      const held = yield* Effect.provide(Effect.flatMap(LedgerWriter, (w) => w.held(M.owner)), openLedger(where, { ledger: "old" }))
      expect(held.map((h) => h.id)).toEqual(["r-1"])
      expect(held[0].action_id).toMatch(/^p_/)
      expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600)
      expect(readFileSync(`${file}.key`, "utf8")).toBe(`${keyHex}\n`)
      const after = onDisk(file)
      for (const m of [keyHex, ...markers]) expect({ m, in: found(after, m) }).toEqual({ m, in: [] })
      expect(found(after, Buffer.from(KEY))).toEqual([])
    }), 60_000)
})

describe("mandate ledger with a safe_telemetry ledger", () => {
  it.live("init writes FILE.key (0600); record without it refuses with key_missing in one line and makes no new key", () =>
    Effect.promise(async () => {
      const dir = tmp()
      const db = join(dir, "cli.db")
      const mandate = (...args: ReadonlyArray<string>) => runCli(["ledger", ...args])
      expect((await mandate("init", db, "--mode", "safe_telemetry")).status).toBe(0)
      expect(statSync(`${db}.key`).mode & 0o777).toBe(0o600)
      const key = readFileSync(`${db}.key`, "utf8").trim()
      const events = join(dir, "e.jsonl")
      writeFileSync(events, JSON.stringify({ type: "failure", run_id: M.run, action_id: M.action, error: "E", measured: false }) + "\n")
      expect((await mandate("record", db, events)).status).toBe(0)
      renameSync(`${db}.key`, join(dir, "moved.key"))
      const refused = await mandate("record", db, events)
      expect(refused.status).toBe(1)
      expect(refused.stderr).toMatch(/^error: key_missing at .+: .+\n$/)
      expect(existsSync(`${db}.key`)).toBe(false)
      const files = { ...onDisk(db), export: Buffer.from((await mandate("export", db, "--mode", "safe_telemetry")).stdout) }
      expect(found(files, M.run).concat(found(files, M.action), found(files, key))).toEqual([])
      expect(files.export.toString()).toMatch(/"action_id":"p_/)
    }), 300_000)
})

const pg = await pgReachable()

describe.skipIf(!pg)("safe_telemetry on PostgreSQL", () => {
  it.effect("no marker and no key in any row; no default key file, so init and open refuse without one", () =>
    Effect.gen(function*() {
      const schema = `i19_privacy_${randomUUID().replace(/-/g, "").slice(0, 12)}`
      const where = parseLocation(`postgres://postgres@127.0.0.1:5432/test#${schema}`)
      const keyFile = join(tmp(), "pg.key")
      const o = { ledger: "pg", keyFile }
      const init = yield* Effect.exit(initLedger(where, { ledger: "pg", mode: "safe_telemetry" }))
      expect(Exit.isFailure(init) && Option.getOrUndefined(Cause.failureOption(init.cause))).toMatchObject({ reason: "key_missing" })
      yield* initLedger(where, { ...o, mode: "safe_telemetry" })
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      const key = readFileSync(keyFile, "utf8").trim()
      const tables = ["ledger_meta", "ledger_held", "ledger_lines", "accounting_reservations", "accounting_usage"]
      const dump = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.map(Effect.forEach(tables, (t) => sql.unsafe<{ row: string }>(`SELECT t::text AS row FROM ${t} t`)), (rs) => rs.flat().map((r) => r.row).join("\n")))
      const dumps: Array<string> = []
      yield* guarded(Effect.map(dump, (d) => void dumps.push(d))).pipe(Effect.provide(Layer.merge(openLedger(where, o), RandomBytes.live)))
      yield* Effect.scoped(Effect.flatMap(Layer.build(recordDecisions(where, o)), (ctx) => Effect.provide(protocols, ctx)))
      dumps.push(yield* Effect.provide(dump, openStores(where, o)))
      expect(dumps[0]).toMatch(/p_[A-Za-z0-9_-]{22}/)
      const leaks = markers.flatMap((m) => dumps.flatMap((d, i) => (d.includes(m) ? [`${m} in dump ${i}`] : [])))
      expect(leaks).toEqual([])
      for (const d of dumps) expect(d.includes(key)).toBe(false)
      const open = yield* Effect.exit(Effect.provide(Effect.asVoid(LedgerWriter), openLedger(where, { ledger: "pg" })))
      expect(Exit.isFailure(open) && Option.getOrUndefined(Cause.failureOption(open.cause))).toMatchObject({ reason: "key_missing" })
      yield* Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA ${schema} CASCADE`)), openStores(where, o))
    }), 120_000)

  it.effect("a ledger that kept its key in ledger_meta: moved to the key file named, held rows pseudonymized", () =>
    Effect.gen(function*() {
      const schema = `i19_privacy_${randomUUID().replace(/-/g, "").slice(0, 12)}`
      const where = parseLocation(`postgres://postgres@127.0.0.1:5432/test#${schema}`)
      const sqlDo = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Effect.provide(Effect.flatMap(SqlClient.SqlClient, f), openStores(where, { ledger: "old" }))
      yield* Effect.provide(createLedger({ ledger: "old", mode: "safe_telemetry", key: KEY }), openStores(where, { ledger: "old" }))
      yield* sqlDo((sql) => Effect.zipRight(
        sql`UPDATE ledger_meta SET key_hex = ${keyHex}, key_check = '' WHERE ledger = 'old'`,
        sql`INSERT INTO ledger_held (ledger, id, owner, action_id, run_id) VALUES ('old', 'r-1', ${M.owner}, ${M.held}, ${M.run})`
      ))
      // No default key file on PostgreSQL: the stored key has nowhere to go, and stays until one is named.
      const refused = yield* Effect.exit(Effect.provide(Effect.asVoid(LedgerWriter), openLedger(where, { ledger: "old" })))
      expect(Exit.isFailure(refused) && Option.getOrUndefined(Cause.failureOption(refused.cause))).toMatchObject({ reason: "key_missing" })
      const keyFile = join(tmp(), "old.key")
      const held = yield* Effect.provide(Effect.flatMap(LedgerWriter, (w) => w.held(M.owner)), openLedger(where, { ledger: "old", keyFile }))
      expect(held.map((h) => [h.id, h.action_id.startsWith("p_")])).toEqual([["r-1", true]])
      expect(readFileSync(keyFile, "utf8")).toBe(`${keyHex}\n`)
      const rows = yield* sqlDo((sql) => sql.unsafe<{ row: string }>(`SELECT t::text AS row FROM ledger_meta t UNION ALL SELECT t::text FROM ledger_held t`))
      const text = rows.map((r) => r.row).join("\n")
      expect([keyHex, M.held, M.owner, M.run].filter((m) => text.includes(m))).toEqual([])
      yield* sqlDo((sql) => sql.unsafe(`DROP SCHEMA ${schema} CASCADE`))
    }), 120_000)
})
