// The tables of the SQL YEA stores (src/yea/state.ts), shared by SQLite and PostgreSQL. Each row
// keeps the record as JSON (its Schema decodes it back) beside the columns it is found by.
import type { StoreMigrations } from "./migrations.js"

export const yeaMigrations: StoreMigrations = {
  table: "mandate_migrations_yea",
  migrations: {
    "1_yea_state": [
      `CREATE TABLE IF NOT EXISTS yea_proposals (id TEXT PRIMARY KEY, keep_until BIGINT NOT NULL, record TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS yea_commits (proposal TEXT PRIMARY KEY, receipt_id TEXT UNIQUE, record TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS yea_auto (key TEXT NOT NULL, frame TEXT NOT NULL, until BIGINT NOT NULL, record TEXT NOT NULL,
        PRIMARY KEY (key, frame))`,
      `CREATE TABLE IF NOT EXISTS yea_handles (handle TEXT PRIMARY KEY, expires BIGINT NOT NULL, record TEXT NOT NULL)`
    ]
  }
}
