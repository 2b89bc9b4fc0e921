// aggregate_export (seed: "a separate grouped export with no identifiers or timestamps and
// suppresses groups smaller than five records by default"). Groups are keyed only by closed or
// bounded values (protocol, event type, action kind, reason code, state); each carries a count and
// sums of tokens and USD; a group with fewer than `minGroup` records is left out, and only the number
// of groups left out is said.
import { Effect, Schema, Stream } from "effect"
import type { LedgerEvent } from "./events.js"
import { fromNanos, toNanos, Usd } from "./usd.js"

export const DEFAULT_MIN_GROUP = 5

export const AggregateGroup = Schema.Struct({
  protocol: Schema.String,
  event: Schema.String,
  kind: Schema.String,
  reason: Schema.String,
  outcome: Schema.String,
  count: Schema.Int,
  tokens: Schema.Int,
  usd: Usd
})
export type AggregateGroup = typeof AggregateGroup.Type

export const AggregateExport = Schema.Struct({
  mode: Schema.Literal("aggregate_export"),
  min_group: Schema.Int,
  groups: Schema.Array(AggregateGroup),
  suppressed_groups: Schema.Int
})
export type AggregateExport = typeof AggregateExport.Type

interface Acc { count: number; tokens: number; usd: bigint }

/** Groups the events of a ledger; `minGroup` >= 1 (the seed's default is 5). */
export const aggregate = <E, R>(events: Stream.Stream<LedgerEvent, E, R>, minGroup = DEFAULT_MIN_GROUP): Effect.Effect<AggregateExport, E, R> =>
  Effect.gen(function*() {
    const k = Math.max(1, Math.floor(minGroup))
    // Action kinds by action id, to group decisions and settlements by kind (ids are never emitted).
    const kinds = new Map<string, string>()
    const groups = new Map<string, Acc>()
    const add = (key: ReadonlyArray<string>, tokens: number, usd: bigint) => {
      const g = JSON.stringify(key)
      const a = groups.get(g) ?? { count: 0, tokens: 0, usd: 0n }
      a.count++
      a.tokens += tokens
      a.usd += usd
      groups.set(g, a)
    }
    yield* Stream.runForEach(events, (e) => Effect.sync(() => {
      switch (e.type) {
        case "action":
          kinds.set(e.action.id, e.action.kind)
          return
        case "decision":
          return add(["ledger", "decision", kinds.get(e.decision.action_id) ?? "", e.decision.reason, e.decision.allowed ? "allowed" : "denied"], 0, 0n)
        case "settlement":
          return add(["ledger", "settlement", kinds.get(e.action_id) ?? "", e.reason, e.state], Number(e.kept_tokens), toNanos(e.kept_usd))
        case "outcome":
          return add(["ledger", "outcome", "", "", e.outcome.result], 0, 0n)
        case "protocol":
          return add([e.decision.protocol, e.decision.kind, "", e.decision.reason ?? "", ""], 0, 0n)
        default:
          return
      }
    }))
    const out: Array<AggregateGroup> = []
    let suppressed = 0
    for (const [key, a] of [...groups.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      if (a.count < k) {
        suppressed++
        continue
      }
      const [protocol, event, kind, reason, outcome] = JSON.parse(key) as Array<string>
      out.push({ protocol, event, kind, reason, outcome, count: a.count, tokens: a.tokens, usd: fromNanos(a.usd) })
    }
    return { mode: "aggregate_export", min_group: k, groups: out, suppressed_groups: suppressed } as const
  }).pipe(Effect.withSpan("ledger.aggregate"))
