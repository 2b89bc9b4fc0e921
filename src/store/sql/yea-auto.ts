// SQL YeaAutoMemory: (proof.key, frame id) -> the reply to an auto INTENT, swept after `until`
// (at least 900 s, §4.3.1). Remembering is one INSERT ... ON CONFLICT DO NOTHING: of any number of
// concurrent repeats, exactly one is new.
import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AutoRecord, type YeaAutoMemoryService } from "../../yea/state.js"
import { json, op, recordRow, SqlSchema } from "./yea-rows.js"

export const makeSqlAuto = (sql: SqlClient.SqlClient): YeaAutoMemoryService => {
  const encode = json(AutoRecord)
  const find = SqlSchema.findOne({
    Request: Schema.Struct({ key: Schema.String, frame: Schema.String }),
    Result: recordRow(AutoRecord),
    execute: ({ frame, key }) => sql`SELECT record FROM yea_auto WHERE key = ${key} AND frame = ${frame}`
  })
  return {
    remember: (r) =>
      op("auto.remember", Effect.gen(function* () {
        const inserted = yield* sql`INSERT INTO yea_auto (key, frame, until, record) VALUES (${r.key}, ${r.frame}, ${r.until}, ${encode(r)})
          ON CONFLICT (key, frame) DO NOTHING RETURNING frame`
        if (inserted.length > 0) return Option.none()
        return Option.map(yield* find({ key: r.key, frame: r.frame }), (x) => x.record)
      })),
    complete: (key, frame, reply) =>
      op("auto.complete", Effect.gen(function* () {
        const row = yield* find({ key, frame })
        if (Option.isNone(row)) return
        yield* sql`UPDATE yea_auto SET record = ${encode({ ...row.value.record, reply })} WHERE key = ${key} AND frame = ${frame}`
      })),
    sweep: (now) => op("auto.sweep", sql`DELETE FROM yea_auto WHERE until < ${now}`)
  }
}
