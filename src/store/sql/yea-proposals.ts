// SQL YeaProposals: proposal id -> record, swept after keep_until.
import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ProposalRecord, type YeaProposalsService } from "../../yea/state.js"
import { json, op, recordRow, SqlSchema } from "./yea-rows.js"

export const makeSqlProposals = (sql: SqlClient.SqlClient): YeaProposalsService => {
  const find = SqlSchema.findOne({ Request: Schema.String, Result: recordRow(ProposalRecord), execute: (id) => sql`SELECT record FROM yea_proposals WHERE id = ${id}` })
  const encode = json(ProposalRecord)
  return {
    put: (r) => op("proposals.put", sql`INSERT INTO yea_proposals (id, keep_until, record) VALUES (${r.proposal.id}, ${r.keepUntil}, ${encode(r)})`),
    get: (id) => op("proposals.get", Effect.map(find(id), Option.map((r) => r.record))),
    sweep: (now) => op("proposals.sweep", sql`DELETE FROM yea_proposals WHERE keep_until < ${now}`)
  }
}
