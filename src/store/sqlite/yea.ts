// The YEA service state on SQLite (the embedded default): the four YEA stores and Reservations on
// one database, so a commit claim and its `total` reservation are one transaction.
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, Layer } from "effect"
import type { ReservationStore } from "../../accounting/backend.js"
import { Atomic, type Reservations } from "../../accounting/reservations.js"
import type { StoreError } from "../../accounting/store-error.js"
import { YeaAutoMemory, YeaCommits, YeaHandles, YeaProposals, type YeaState } from "../../yea/state.js"
import { makeSqlAuto } from "../sql/yea-auto.js"
import { makeSqlCommits } from "../sql/yea-commits.js"
import { makeSqlHandles } from "../sql/yea-handles.js"
import { yeaMigrations } from "../sql/yea-migrations.js"
import { makeSqlProposals } from "../sql/yea-proposals.js"
import { migrate } from "./client.js"
import * as SqliteReservations from "./reservations.js"

export const migrations = yeaMigrations

/** The YEA state stores on the SQLite database in context (SqliteStore.layer); applies their migrations. */
export const stateLayer: Layer.Layer<YeaState, StoreError, SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic> = Layer.effectContext(
  Effect.gen(function* () {
    yield* migrate(yeaMigrations)
    const sql = yield* SqlClient.SqlClient
    const atomic = yield* Atomic
    return Context.make(YeaProposals, makeSqlProposals(sql)).pipe(
      Context.add(YeaCommits, makeSqlCommits(sql, atomic.transaction, false)),
      Context.add(YeaAutoMemory, makeSqlAuto(sql)),
      Context.add(YeaHandles, makeSqlHandles(sql))
    )
  })
)

/** State and Reservations together on the database in context. */
export const layer: Layer.Layer<YeaState | Reservations | ReservationStore, StoreError, SqlClient.SqlClient | SqliteClient.SqliteClient | Atomic> =
  Layer.merge(stateLayer, SqliteReservations.layer)
