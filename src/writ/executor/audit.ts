// The audit record (section 9.3): one entry per call or revoke received. Writing it never fails
// the request it records: a store that refuses the entry is logged. What an unauthenticated sender
// can make the executor store is bounded (section 12): every text field is bounded in length (a
// longer one keeps a prefix and the hash of the whole), and the rows for refusals of requests that
// did not authenticate are limited by rate per peer, the suppressed ones counted in one row.
import { Effect } from "effect"
import type { CallAnswer } from "./answers.js"
import { AUDIT_SUPPRESSED, type Peer } from "./services.js"
import type { AuditBase, ExecutorState, StepEnv } from "./state.js"
import type { AuditEntry } from "./stores.js"
import { hashOf, identity } from "./tally-sign.js"

/** Longest text field stored as given; a longer one is cut to a prefix and its hash. */
export const AUDIT_FIELD_MAX = 256
const PREFIX = 64

/** `s` within AUDIT_FIELD_MAX characters: itself, or its prefix and the hash of the whole. */
export const boundField = (s: string | null): string | null =>
  s === null || s.length <= AUDIT_FIELD_MAX ? s : `${s.slice(0, PREFIX)}...(${s.length} chars, ${hashOf(s)})`

const bounded = (e: AuditEntry): AuditEntry => ({
  ...e,
  identity: boundField(e.identity),
  unparsed: boundField(e.unparsed),
  principal: boundField(e.principal),
  peer: boundField(e.peer),
  root: boundField(e.root),
  leaf: boundField(e.leaf),
  op: boundField(e.op),
  outcome: boundField(e.outcome) ?? "",
  reason: boundField(e.reason),
  signed: boundField(e.signed)
})

export const audit = (env: StepEnv<"auditLog">, entry: AuditEntry) =>
  env.auditLog.append(bounded(entry)).pipe(
    Effect.catchAll((e) => Effect.logWarning(`audit record not written: ${e.message}`))
  )

/** The row standing for `count` refusals (or replays) from `peer` not recorded one by one (section 9.3). */
const summaryRow = (time: number, kind: AuditEntry["kind"], peer: string | null, count: number, what = "refusals"): AuditEntry => ({
  time, kind, identity: null, unparsed: `${count} ${what} not recorded one by one`, principal: null, peer,
  root: null, leaf: null, op: null, outcome: "suppressed", reason: AUDIT_SUPPRESSED, signed: null
})

/** Most peers whose suppressed refusals are counted apart; the rest share one count. */
const SUPPRESSED_PEERS_MAX = 10_000

/**
 * Audits the refusal of a request that did not authenticate (section 7 steps 1 and 2, an invalid
 * or over-rate revoke, a transport refusal) within its peer's allowance, or counts it.
 */
export const auditRefusal = (env: StepEnv<"auditLog", "refusalAudit" | "suppressed">, entry: AuditEntry) =>
  auditBounded(env, entry, env.state.refusalAudit, env.state.suppressed, "refusals")

/**
 * Audits the replay of a call answered from the call store (section 7 step 9) within its peer's
 * allowance, or counts it: anyone holding a call's bytes can send them again, so replays are rows
 * an unauthenticated sender could make the executor write (section 9.3, bounded by rate per peer).
 */
export const auditReplay = (
  env: StepEnv<"auditLog", "replayAudit" | "suppressedReplays">,
  base: AuditBase,
  answer: Extract<CallAnswer, { _tag: "tally" }>,
  signed: string = identity(answer.tally)
) =>
  auditBounded(
    env,
    { ...base, outcome: "replay", reason: (answer.tally.err as { code?: string } | null)?.code ?? null, signed },
    env.state.replayAudit,
    env.state.suppressedReplays,
    "replays"
  )

/** Counts one row not written for `peer`, to be written in its summary row. */
const countSuppressed = (suppressed: Map<string | null, number>, peer: string | null): void => {
  const key = suppressed.has(peer) || suppressed.size < SUPPRESSED_PEERS_MAX ? peer : "(others)"
  suppressed.set(key, (suppressed.get(key) ?? 0) + 1)
}

/** A replay's row that the peer's allowance suppresses, counted as auditReplay counts it (replays.ts). */
export const countSuppressedReplay = (env: StepEnv<never, "suppressedReplays">, peer: string | null): void =>
  countSuppressed(env.state.suppressedReplays, peer)

const auditBounded = (
  env: StepEnv<"auditLog">,
  entry: AuditEntry,
  buckets: ExecutorState["refusalAudit"],
  suppressed: Map<string | null, number>,
  what: string
) =>
  Effect.gen(function*() {
    const peer = entry.peer
    const allowed = yield* buckets.take(peer === null ? "(none)" : `peer:${peer}`)
    if (!allowed.ok) return countSuppressed(suppressed, peer)
    const count = suppressed.get(peer)
    if (count !== undefined) {
      suppressed.delete(peer)
      yield* audit(env, summaryRow(entry.time, entry.kind, peer, count, what))
    }
    yield* audit(env, entry)
  })

/** Writes the summary rows still owed (when the executor closes). */
export const flushSuppressed = (env: StepEnv<"auditLog", "suppressed" | "suppressedReplays">, time: number) =>
  Effect.forEach([[env.state.suppressed, "refusals"], [env.state.suppressedReplays, "replays"]] as const, ([counts, what]) =>
    Effect.forEach([...counts], ([peer, count]) =>
      Effect.zipRight(
        Effect.sync(() => counts.delete(peer)),
        audit(env, summaryRow(time, "call", peer, count, what))
      ), { discard: true }), { discard: true })

/** The audit record's `peer` (section 9.3): the authenticated peer's name, "(unnamed)", or null. */
export const peerNameOf = (peer: Peer): string | null =>
  peer._tag === "named" ? peer.id : peer._tag === "unnamed" ? "(unnamed)" : null

/** The audit record of a call or revoke refused before it had an identity (section 9.3). */
export const auditUnidentified = (
  env: StepEnv<"auditLog", "refusalAudit" | "suppressed">,
  time: number,
  kind: AuditEntry["kind"],
  peer: string | null,
  reason: string
) =>
  auditRefusal(env, {
    time, kind, identity: null, unparsed: reason, principal: null, peer,
    root: null, leaf: null, op: null, outcome: "error", reason, signed: null
  })

/** Audits a call's answer with the call's fields, and returns the answer. */
export const auditAnswer = (env: StepEnv<"auditLog">, base: AuditBase, answer: CallAnswer, outcome?: string) =>
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
