// The SQLite Layer's options: the composition root passes the pragmas, and the
// store applies them when it opens the file.
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqliteStore from "../../src/store/sqlite/client.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-sqlite-options-"))

const pragma = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`)).pipe(
    Effect.map((rows) => Object.values(rows[0])[0])
  )

describe("SQLite store options", () => {
  it.scoped("synchronous is FULL by default, NORMAL when asked, and busy_timeout is the option's", () =>
    Effect.gen(function*() {
      const byDefault = yield* Effect.provide(
        Effect.all([pragma("synchronous"), pragma("busy_timeout"), pragma("journal_mode")]),
        SqliteStore.layer(join(dir, "default.db"))
      )
      // 2 = FULL, 1 = NORMAL (SQLite's numbering).
      expect(byDefault).toEqual([2, 30000, "wal"])
      const tuned = yield* Effect.provide(
        Effect.all([pragma("synchronous"), pragma("busy_timeout")]),
        SqliteStore.layer(join(dir, "tuned.db"), { synchronous: "normal", busyTimeoutMs: 1234 })
      )
      expect(tuned).toEqual([1, 1234])
    }))
})
