// The joined boundary (src/store/sql/transaction.ts `makeJoin`), which the SQLite reserve,
// settlement and ledger append use instead of a savepoint of their own: a joined effect that fails
// with a StoreError after writing abandons the step it joined, so a caller that catches that
// failure and goes on cannot commit half of it (the step fails alone; the next one commits); a
// typed failure of the caller's own passes without abandoning anything; with no step open, the
// joined effect runs as an atomic step of its own.
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StoreError } from "../../src/accounting/store-error.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { GroupCommit, layer as groupCommitLayer } from "../../src/store/sqlite/group-commit.js"
import { makeJoin } from "../../src/store/sql/transaction.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-join-"))
let files = 0

const open = Effect.gen(function*() {
  const ctx = yield* Layer.build(
    Layer.mergeAll(
      groupCommitLayer(),
      Layer.effectDiscard(SqliteStore.migrate({ table: "mandate_migrations_test_join", migrations: { "1_t": ["CREATE TABLE t (k TEXT PRIMARY KEY)"] } }))
    ).pipe(Layer.provideMerge(SqliteStore.layer(join(dir, `store-${++files}.db`))))
  )
  const g = yield* Effect.provide(GroupCommit, ctx)
  const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
  const insert = (k: string) => Effect.asVoid(sql`INSERT INTO t (k) VALUES (${k})`)
  const seen = Effect.map(sql<{ k: string }>`SELECT k FROM t ORDER BY k`, (rows) => rows.map((r) => r.k))
  return { run: g.run, joined: makeJoin(g.run), insert, seen }
})

class Refused extends Error {
  readonly _tag = "Refused"
}

describe("makeJoin", () => {
  it.scoped("a StoreError after a write fails the step it joined, even when its caller catches it; the next step commits", () =>
    Effect.gen(function*() {
      const { run, joined, insert, seen } = yield* open
      const failed = yield* Effect.exit(run(Effect.gen(function*() {
        yield* Effect.ignore(joined(Effect.zipRight(insert("half"), Effect.fail(new StoreError({ operation: "test.write", message: "injected after a write" })))))
        yield* Effect.ignore(insert("after")) // refused: the step was abandoned
        return "went on"
      })))
      expect(Exit.isFailure(failed) && failed.cause._tag === "Fail" ? failed.cause.error : undefined).toMatchObject({ _tag: "StoreError", operation: "sqlite.savepoint" })
      yield* run(insert("next"))
      expect(yield* seen).toEqual(["next"])
    }))

  it.scoped("a typed failure of the caller's own abandons nothing", () =>
    Effect.gen(function*() {
      const { run, joined, insert, seen } = yield* open
      yield* run(Effect.gen(function*() {
        yield* insert("before")
        yield* Effect.ignore(joined(Effect.fail(new Refused("not this one"))))
        yield* insert("after")
      }))
      expect(yield* seen).toEqual(["after", "before"])
    }))

  it.scoped("with no step open, the joined effect is an atomic step of its own", () =>
    Effect.gen(function*() {
      const { joined, insert, seen } = yield* open
      yield* joined(insert("alone"))
      const exit = yield* Effect.exit(joined(Effect.zipRight(insert("undone"), Effect.fail(new StoreError({ operation: "test.write", message: "injected" })))))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* seen).toEqual(["alone"])
    }))
})
