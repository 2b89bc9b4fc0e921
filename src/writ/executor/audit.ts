// The audit record (section 9.3): one entry per call or revoke received. Writing it never fails
// the request it records: a store that refuses the entry is logged.
import { Effect } from "effect"
import type { CallAnswer } from "./answers.js"
import type { Peer } from "./services.js"
import type { AuditBase, ExecutorEnv } from "./state.js"
import type { AuditEntry } from "./stores.js"
import { identity } from "./tally-sign.js"

export const audit = (env: ExecutorEnv, entry: AuditEntry) =>
  env.auditLog.append(entry).pipe(
    Effect.catchAll((e) => Effect.logWarning(`audit record not written: ${e.message}`))
  )

/** The audit record's `peer` (section 9.3): the authenticated peer's name, "(unnamed)", or null. */
export const peerNameOf = (peer: Peer): string | null =>
  peer._tag === "named" ? peer.id : peer._tag === "unnamed" ? "(unnamed)" : null

/** The audit record of a call or revoke refused before it had an identity (section 9.3). */
export const auditUnidentified = (
  env: ExecutorEnv,
  time: number,
  kind: AuditEntry["kind"],
  peer: string | null,
  reason: string
) =>
  audit(env, {
    time, kind, identity: null, unparsed: reason, principal: null, peer,
    root: null, leaf: null, op: null, outcome: "error", reason, signed: null
  })

/** Audits a call's answer with the call's fields, and returns the answer. */
export const auditAnswer = (env: ExecutorEnv, base: AuditBase, answer: CallAnswer, outcome?: string) =>
  Effect.as(
    audit(env, {
      ...base,
      outcome: outcome ?? (answer._tag === "tally" ? String(answer.tally.st) : "error"),
      reason: answer._tag === "tally"
        ? ((answer.tally.err as { code?: string } | null)?.code ?? null)
        : answer.reason,
      signed: answer._tag === "tally" ? identity(answer.tally) : null
    }),
    answer
  )
