// SQL YeaHandles: handle -> remainder and holder, swept after `expires` (at least 10 minutes, §4.6).
import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { HandleRecord, type YeaHandlesService } from "../../yea/state.js"
import { json, op, recordRow, SqlSchema } from "./yea-rows.js"

export const makeSqlHandles = (sql: SqlClient.SqlClient): YeaHandlesService => {
  const encode = json(HandleRecord)
  const find = SqlSchema.findOne({ Request: Schema.String, Result: recordRow(HandleRecord), execute: (h) => sql`SELECT record FROM yea_handles WHERE handle = ${h}` })
  return {
    put: (records) =>
      op("handles.put", Effect.forEach(records, (r) => sql`INSERT INTO yea_handles (handle, expires, record) VALUES (${r.handle}, ${r.expires}, ${encode(r)})`, { discard: true })),
    get: (h) => op("handles.get", Effect.map(find(h), Option.map((x) => x.record))),
    sweep: (now) => op("handles.sweep", sql`DELETE FROM yea_handles WHERE expires < ${now}`)
  }
}
