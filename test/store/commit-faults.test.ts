// A store write that fails at COMMIT (or ROLLBACK) is the typed StoreError, never
// a defect, on every store. Real faults: SQLite reaching `max_page_count` mid-run (SQLITE_FULL, after
// which SQLite rolls the transaction back by itself) and the store file made read-only mid-run (the
// immutable attribute, which refuses writes even through descriptors already open, to root too);
// the memory store's commit fault injection. PostgreSQL stopped mid-run: pg-stopped.test.ts.
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as MemoryAtomic from "../../src/store/memory/atomic.js"
import * as MemoryReservations from "../../src/store/memory/reservations.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteReservations from "../../src/store/sqlite/reservations.js"
import { expectStoreError } from "./support.js"
import { chattr, immutableSupported as supportsImmutable } from "../support/immutable.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-commit-faults-"))

const open = (file: string) =>
  Layer.mergeAll(
    SqliteReservations.layer,
    Layer.effectDiscard(SqliteStore.migrate({
      table: "mandate_migrations_test_filler",
      migrations: { "1_filler": ["CREATE TABLE filler (data TEXT NOT NULL)"] }
    }))
  ).pipe(Layer.provideMerge(SqliteStore.layer(file)))

const reserve = (id: string, key = "k") =>
  Effect.flatMap(Reservations, (r) => r.reserve({ id, limits: [{ key, limit: 1000n, amount: 1n }], onFailure: "consume" }))


const pragmaNumber = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, number>>(`PRAGMA ${name}`)).pipe(
    Effect.map((rows) => Number(Object.values(rows[0])[0]))
  )

const setMaxPages = (n: number) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`PRAGMA max_page_count = ${n}`))

describe("a failed commit is a typed StoreError (SQLite, max_page_count reached mid-run)", () => {
  it.scopedLive("a step that caught the full store's failure and went on is refused at commit, nothing kept", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(open(join(dir, "full-caught.db")))
      yield* Effect.provide(reserve("before"), ctx)
      const pages = yield* Effect.provide(pragmaNumber("page_count"), ctx)
      yield* Effect.provide(setMaxPages(pages), ctx)
      const atomic = yield* Effect.provide(Atomic, ctx)
      const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
      const exit = yield* Effect.exit(atomic.transaction(Effect.gen(function*() {
        yield* reserve("in-step")
        // SQLITE_FULL: SQLite rolls the whole transaction back by itself.
        const full = yield* Effect.either(sql`INSERT INTO filler (data) VALUES (${"x".repeat(200_000)})`)
        expect(full._tag).toBe("Left")
        return "went on"
      })).pipe(Effect.provide(ctx)))
      expectStoreError(exit, /^sqlite\.commit$/)
      yield* Effect.provide(setMaxPages(1_000_000), ctx)
      const r = yield* Effect.provide(Reservations, ctx)
      expect(yield* r.get("in-step")).toEqual(Option.none())
      // The connection is whole again: the next step commits.
      expect((yield* Effect.provide(reserve("after"), ctx)).state).toBe("held")
      expect(yield* r.used("k")).toBe(2n)
    }))

  it.scopedLive("a reserve that meets the full store fails with a StoreError, then works once there is room", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(open(join(dir, "full.db")))
      yield* Effect.provide(reserve("before"), ctx)
      yield* Effect.provide(setMaxPages(yield* Effect.provide(pragmaNumber("page_count"), ctx)), ctx)
      // A key long enough to need new pages; before the fix the rollback of this step was a defect.
      const exit = yield* Effect.exit(Effect.provide(reserve("big", "k".repeat(100_000)), ctx))
      expectStoreError(exit)
      yield* Effect.provide(setMaxPages(1_000_000), ctx)
      expect((yield* Effect.provide(reserve("big", "k".repeat(100_000)), ctx)).state).toBe("held")
    }))
})

const immutableSupported = supportsImmutable(dir, "the read-only store tests are")

describe("a failed commit is a typed StoreError (SQLite, store file made read-only mid-run)", () => {
  it.scopedLive.skipIf(!immutableSupported)("the commit of a step fails while the file is read-only; nothing kept; works again after", () =>
    Effect.gen(function*() {
      const file = join(dir, "readonly.db")
      const files = [file, `${file}-wal`]
      const ctx = yield* Layer.build(open(file))
      yield* Effect.provide(reserve("before"), ctx)
      // Never leave an immutable file behind, whatever happens.
      yield* Effect.addFinalizer(() => Effect.sync(() => chattr("-i", files)))
      const atomic = yield* Effect.provide(Atomic, ctx)
      const exit = yield* Effect.exit(atomic.transaction(Effect.gen(function*() {
        yield* reserve("in-step")
        // Mid-step: the writes so far sit in SQLite's page cache; COMMIT must write them to the WAL.
        expect(chattr("+i", files)).toBe(true)
        return "done"
      })).pipe(Effect.provide(ctx)))
      expectStoreError(exit, /^sqlite\.commit$/)
      // While read-only, every write step fails typed.
      expectStoreError(yield* Effect.exit(Effect.provide(reserve("while-readonly"), ctx)))
      expect(chattr("-i", files)).toBe(true)
      const r = yield* Effect.provide(Reservations, ctx)
      expect(yield* r.get("in-step")).toEqual(Option.none())
      expect(yield* r.get("while-readonly")).toEqual(Option.none())
      expect((yield* Effect.provide(reserve("after"), ctx)).state).toBe("held")
      expect(yield* r.used("k")).toBe(2n)
    }))
})

describe("a failed commit is a typed StoreError (memory store, fault injection)", () => {
  it.effect("an injected commit failure undoes the step's writes and fails with memory.commit", () =>
    Effect.gen(function*() {
      const journal = yield* MemoryAtomic.MemoryJournal
      const r = yield* Reservations
      yield* reserve("before")
      yield* journal.failCommits(1)
      const exit = yield* Effect.exit(reserve("in-step"))
      expect(expectStoreError(exit, /^memory\.commit$/).store).toBe("memory")
      expect(yield* r.get("in-step")).toEqual(Option.none())
      expect(yield* r.used("k")).toBe(1n)
      // One fault only: the next step commits.
      expect((yield* reserve("after")).state).toBe("held")
      expect(yield* r.used("k")).toBe(2n)
    }).pipe(Effect.provide(MemoryReservations.layer)))
})
