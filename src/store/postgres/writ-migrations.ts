// The tables of the PostgreSQL Writ executor stores (spec section 9), shared by every worker process
// serving one executor key. They mirror the SQLite tables (src/store/sqlite/writ-stores.ts) so the
// row Schemas of src/store/sql/writ-rows.ts decode both: JSON objects as RFC 8785 text, flags as
// 0 or 1, identity lists as JSON arrays. Two additions for several workers:
//   - `worker` on pending calls and begun reversals: the identity of the process that is running
//     the operation (src/store/postgres/writ-worker.ts), so recovery after a restart resolves only
//     records whose process is gone (section 9), never a live worker's;
//   - `writ_workers_seq`: where worker identities come from (unique for the life of the schema).
//   - `writ_revocation_seq`: one row whose number moves, inside the recording transaction, with
//     every revoke recorded (a trigger on `writ_revokes`, so no writer can forget it). The row lock
//     orders revokes by commit, which `writ_revokes.seq` (a sequence, handed out before commit)
//     does not: a worker that reads the same number twice knows no revoke committed in between,
//     in one cheap read (revocation-seq.ts, issue 32).
// Integers that can pass 2^31 (times, `exp`) are BIGINT, read back as float8 (exact below 2^53,
// which section 1.1's integers are) so rows decode to numbers.
import type { StoreMigrations } from "../sql/migrations.js"
import { admitFunction } from "./writ-admit.js"

export const migrations: StoreMigrations = {
  table: "mandate_migrations_writ",
  migrations: {
    "1_executor_stores": [
      `CREATE TABLE IF NOT EXISTS writ_calls (
        seq BIGSERIAL UNIQUE, leaf TEXT NOT NULL, id TEXT NOT NULL, call TEXT NOT NULL, op TEXT NOT NULL,
        acc BIGINT NOT NULL, standing SMALLINT NOT NULL, chain TEXT NOT NULL, issuers TEXT NOT NULL,
        exp BIGINT NOT NULL, reservation TEXT, state TEXT NOT NULL, tally TEXT, res TEXT, worker INTEGER,
        PRIMARY KEY (leaf, id))`,
      `CREATE INDEX IF NOT EXISTS writ_calls_pending ON writ_calls (seq) WHERE state = 'pending'`,
      `CREATE TABLE IF NOT EXISTS writ_tallies (
        tally TEXT PRIMARY KEY, call TEXT NOT NULL, acc BIGINT NOT NULL, forward SMALLINT NOT NULL,
        chain TEXT NOT NULL, issuers TEXT NOT NULL, object TEXT NOT NULL, res TEXT)`,
      `CREATE TABLE IF NOT EXISTS writ_tally_writs (writ TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (writ, tally))`,
      `CREATE TABLE IF NOT EXISTS writ_tally_issuers (iss TEXT NOT NULL, tally TEXT NOT NULL, PRIMARY KEY (iss, tally))`,
      `CREATE TABLE IF NOT EXISTS writ_revokes (
        seq BIGSERIAL PRIMARY KEY, revoke TEXT NOT NULL, writ TEXT NOT NULL, iss TEXT NOT NULL,
        exp BIGINT, rcv BIGINT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS writ_revokes_writ ON writ_revokes (writ, iss)`,
      `CREATE TABLE IF NOT EXISTS writ_reversals (
        target TEXT PRIMARY KEY, state TEXT NOT NULL, call TEXT NOT NULL, res TEXT, worker INTEGER)`,
      `CREATE TABLE IF NOT EXISTS writ_issued (
        seq BIGSERIAL PRIMARY KEY, leaf TEXT NOT NULL, id TEXT NOT NULL, writ TEXT NOT NULL,
        hld TEXT NOT NULL, above TEXT NOT NULL, above_issuers TEXT NOT NULL, object TEXT NOT NULL,
        UNIQUE (leaf, id, writ))`,
      `CREATE TABLE IF NOT EXISTS writ_subs (
        seq BIGSERIAL PRIMARY KEY, leaf TEXT NOT NULL, id TEXT NOT NULL, sub_call TEXT NOT NULL,
        signer TEXT NOT NULL, object TEXT NOT NULL, UNIQUE (leaf, id, sub_call, signer))`,
      `CREATE TABLE IF NOT EXISTS writ_acks (revoke TEXT NOT NULL, ack TEXT NOT NULL, object TEXT NOT NULL,
        res TEXT NOT NULL, PRIMARY KEY (revoke, ack))`,
      `CREATE TABLE IF NOT EXISTS writ_audit (seq BIGSERIAL PRIMARY KEY, time BIGINT NOT NULL, entry TEXT NOT NULL)`,
      `CREATE SEQUENCE IF NOT EXISTS writ_workers_seq AS INTEGER CYCLE`
    ],
    // Steps 7 to 10 of an admission as one statement (writ-admit.ts).
    "2_admit_function": [admitFunction],
    // The revocation sequence number (revocation-seq.ts): moved by every revoke recorded.
    "3_revocation_seq": [
      `CREATE TABLE IF NOT EXISTS writ_revocation_seq (one BOOLEAN PRIMARY KEY CHECK (one), n BIGINT NOT NULL)`,
      `INSERT INTO writ_revocation_seq (one, n) VALUES (true, 0) ON CONFLICT DO NOTHING`,
      `CREATE OR REPLACE FUNCTION writ_revocation_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE writ_revocation_seq SET n = n + 1 WHERE one;
        RETURN NULL;
      END $$`,
      `DROP TRIGGER IF EXISTS writ_revokes_moved ON writ_revokes`,
      `CREATE TRIGGER writ_revokes_moved AFTER INSERT ON writ_revokes FOR EACH ROW EXECUTE FUNCTION writ_revocation_moved()`
    ]
  }
}

/** The call store's columns as the shared CallRow decodes them. */
export const CALL_COLUMNS =
  "leaf, id, call, op, acc::float8 AS acc, standing, chain, issuers, exp::float8 AS exp, reservation, state, tally, res"

/** The tally store's columns (of alias `t`) as the shared TallyRow decodes them. */
export const TALLY_COLUMNS = "t.tally, t.call, t.acc::float8 AS acc, t.forward, t.chain, t.issuers, t.object, t.res"
