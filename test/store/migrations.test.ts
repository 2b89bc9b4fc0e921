// @effect/sql's Migrator with a table per store module, stores written before it
// still open, a failed migration is a StoreError, and store rows are decoded by their Schemas so a
// corrupted row is a StoreError, never a wrong value.
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import { copyFileSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { AuditLog, CallStore, ReversalStore, TallyStore } from "../../src/writ/executor/stores.js"
import { accepted, cases } from "../writ-executor/stores-cases.js"
import { expectStoreError } from "./support.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-migrations-"))
// Written by the code before the Migrator (commit 6d0bde3): every case of stores-cases.ts, committed.
const fixture = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "pre-migrator.sqlite")


const rows = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(query))

describe("migrations", () => {
  it.scoped("a store file written before the Migrator still opens, with everything it held", () =>
    Effect.gen(function*() {
      const file = join(dir, "old.sqlite")
      copyFileSync(fixture, file)
      for (let open = 0; open < 2; open++) {
        // Twice: the second opening finds every migration recorded and applies nothing.
        const ctx = (yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(SqliteWrit.layer(file))
          for (const c of cases) expect(yield* Effect.provide(c.read, ctx)).toEqual(c.expected)
          return yield* Effect.provide(
            Effect.all([
              rows("SELECT migration_id, name FROM mandate_migrations_writ"),
              rows("SELECT migration_id, name FROM mandate_migrations_accounting")
            ]),
            ctx
          )
        })))
        // The writ store's own migrations run on the old file too (2: pending records name their owner).
        expect(ctx).toEqual([[{ migration_id: 1, name: "executor_stores" }, { migration_id: 2, name: "owners" }], [{ migration_id: 1, name: "reservations" }]])
      }
      // And it takes new writes.
      const ctx = yield* Layer.build(SqliteWrit.layer(file))
      const calls = Context.get(ctx, CallStore)
      yield* calls.insertPending({ ...accepted, id: "after-migration" })
      expect((yield* calls.pending).map((a) => a.id)).toContain("after-migration")
    }))

  it.scoped("a migration that fails is a StoreError naming the store and the module's table", () =>
    Effect.gen(function*() {
      const file = join(dir, "bad-migration.sqlite")
      const ctx = yield* Layer.build(SqliteStore.layer(file))
      const exit = yield* Effect.exit(Effect.provide(
        SqliteStore.migrate({
          table: "mandate_migrations_test_bad",
          migrations: { "1_ok": ["CREATE TABLE ok_table (x TEXT)"], "2_bad": ["CREATE TABLE ok_table (x TEXT)"] }
        }),
        ctx
      ))
      const e = expectStoreError(exit)
      expect([e.operation, e.store]).toEqual(["sqlite.migrate mandate_migrations_test_bad", file])
      expect(e.message).toMatch(/already exists/)
      // One atomic step: the first migration is not kept either.
      expect(yield* Effect.provide(rows("SELECT name FROM sqlite_master WHERE name = 'ok_table'"), ctx)).toEqual([])
    }))
})

describe("a corrupted store row is a typed StoreError", () => {
  it.scoped("every store's read of a corrupted row fails with a StoreError naming the operation", () =>
    Effect.gen(function*() {
      const file = join(dir, "corrupt.sqlite")
      copyFileSync(fixture, file)
      const ctx = yield* Layer.build(SqliteWrit.layer(file))
      const corrupt = (statement: string) =>
        Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)), ctx)
      const expectCorrupt = <A>(read: Effect.Effect<A, unknown, StoreContext>, operation: string) =>
        Effect.map(Effect.exit(Effect.provide(read, ctx)), (exit) => expect(expectStoreError(exit).operation).toBe(operation))

      yield* corrupt(`UPDATE writ_calls SET state = 'finished' WHERE id = '${accepted.id}'`)
      yield* expectCorrupt(Effect.flatMap(CallStore, (s) => s.get(accepted.leaf, accepted.id)), "writ.callStore.get")
      // A pending call that claims a tally, and a flag that is not 0 or 1.
      yield* corrupt(`UPDATE writ_calls SET state = 'pending', standing = 0 WHERE id = '${accepted.id}'`)
      yield* expectCorrupt(Effect.flatMap(CallStore, (s) => s.pending), "writ.callStore.pending")
      yield* corrupt("UPDATE writ_tallies SET forward = 2 WHERE tally = 'T1'")
      yield* expectCorrupt(Effect.flatMap(TallyStore, (s) => s.get("T1")), "writ.tallyStore.get")
      // Stored JSON that the strict reader refuses (a duplicate member).
      yield* corrupt(`UPDATE writ_tallies SET forward = 1, object = '{"a":1,"a":2}' WHERE tally = 'T1'`)
      yield* expectCorrupt(Effect.flatMap(TallyStore, (s) => s.underWrit("W1")), "writ.tallyStore.underWrit")
      yield* corrupt("UPDATE writ_reversals SET state = 'maybe' WHERE target = 'T1'")
      yield* expectCorrupt(Effect.flatMap(ReversalStore, (s) => s.get("T1")), "writ.reversalStore.get")
      yield* corrupt(`UPDATE writ_audit SET entry = '{"time":"yesterday"}'`)
      yield* expectCorrupt(Effect.flatMap(AuditLog, (s) => s.read), "writ.auditLog.read")

      // Reservations (the count and total stores): a reservation row and a usage row.
      yield* corrupt(`UPDATE accounting_reservations SET consumed = '["-1","x"]' WHERE id = 'writ/call/L/1'`)
      yield* expectCorrupt(Effect.flatMap(Reservations, (r) => r.get("writ/call/L/1")), "reservations.load")
      // The same reservation reserved again (idempotency reads the row first): refused, nothing consumed.
      const atomic = Context.get(ctx, Atomic)
      yield* expectCorrupt(
        atomic.transaction(Effect.flatMap(Reservations, (r) =>
          r.reserve({
            id: "writ/call/L/1",
            limits: [{ key: "writ/count/W", limit: 1n, amount: 1n }, { key: "writ/total/W/amount", limit: 600n, amount: 400n }],
            onFailure: "consume"
          }))),
        "reservations.load"
      )
      yield* corrupt(`UPDATE accounting_usage SET used = 'lots' WHERE key = 'writ/count/W'`)
      yield* expectCorrupt(Effect.flatMap(Reservations, (r) => r.used("writ/count/W")), "reservations.used")
    }))
})
