// Store files are created readable by their owner only (0600, like key
// files), the -wal and -shm files too; a store that cannot be opened fails with a StoreError that
// names the file.
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgStore from "../../src/store/postgres/client.js"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { expectStoreError } from "./support.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-store-files-"))
const mode = (file: string) => statSync(file).mode & 0o777


describe("store files", () => {
  it.scoped("store files are created with mode 0600, the -wal and -shm files too", () =>
    Effect.gen(function*() {
      const file = join(dir, "private.sqlite")
      const ctx = yield* Layer.build(SqliteWrit.layer(file))
      // A write, so that the WAL and its index exist.
      yield* Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO writ_audit (time, entry) VALUES (1, '{}')`), ctx)
      expect([mode(file), mode(`${file}-wal`), mode(`${file}-shm`)]).toEqual([0o600, 0o600, 0o600])
    }))

  it.scoped("an existing store file keeps its mode", () =>
    Effect.gen(function*() {
      const file = join(dir, "existing.sqlite")
      writeFileSync(file, "")
      chmodSync(file, 0o640)
      yield* Layer.build(SqliteWrit.layer(file))
      expect(mode(file)).toBe(0o640)
    }))

  it.scoped("a store that cannot be opened fails with a StoreError naming the file", () =>
    Effect.gen(function*() {
      const missing = join(dir, "no-such-folder", "store.sqlite")
      const e = expectStoreError(yield* Effect.exit(Layer.build(SqliteWrit.layer(missing))))
      expect([e.operation, e.store]).toEqual(["sqlite.open", missing])
      expect(e.message).toMatch(/ENOENT/)
      // A file that is not a database: opening succeeds, the first statement (a pragma) does not.
      const garbage = join(dir, "garbage.sqlite")
      writeFileSync(garbage, "this is not a SQLite database, not at all; ".repeat(200))
      const g = expectStoreError(yield* Effect.exit(Layer.build(SqliteStore.layer(garbage))))
      expect([g.operation, g.store]).toEqual(["sqlite.open", garbage])
      expect(g.message).toMatch(/not a database/)
    }))

  it.scoped("a PostgreSQL store that cannot be reached fails with a StoreError naming it, without credentials", () =>
    Effect.gen(function*() {
      // Port 1 on loopback: nothing listens there.
      const layer = PgStore.layer({ url: "postgres://someone:secret@127.0.0.1:1/db", schema: "s", connectTimeoutMs: 2_000 })
      const e = expectStoreError(yield* Effect.exit(Layer.build(layer)))
      expect([e.operation, e.store]).toEqual(["postgres.open", "postgres://127.0.0.1:1/db schema s"])
      expect(JSON.stringify(e.store)).not.toContain("secret")
    }))
})
