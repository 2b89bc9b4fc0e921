// A call refused inside the admission gate's step (section 7 steps 7 to 10: revoked, the peer
// binding, count or total exhausted) is signed and audited in that same step (admission.ts
// `refusedInStep`): on group commit one step per refused call instead of two (the admission's,
// then the audit row's). What is answered and audited must be what the two-step path gave: the
// answer by a model of the limits, the audit row as `auditAnswer` writes it after the gate
// ({ base, outcome: tally's st, reason: its err.code, signed: its identity }), one row per call, in
// order. Generated sequences of amounts (fixed seeds) on both stores, against that model.
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Option } from "effect"
import { GroupCommit } from "../../src/store/sqlite/group-commit.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Peer } from "../../src/writ/executor/services.js"
import { AuditLog } from "../../src/writ/executor/stores.js"
import { act, call, identity, key, ok, revoke, rig, scripted, settable, T0, writ } from "./fixtures.js"
import { kinds, openDurable } from "./stores-support.js"

const A = key(1)
const E = key(3)

/** A small seeded generator (xorshift32): the sequence is the same on every run. */
const prng = (seed: number) => {
  let x = seed >>> 0 || 1
  return (n: number) => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x % n
  }
}

const codeOf = (t: JsonObject) => (t.err as { code?: string } | null)?.code ?? null

for (const kind of kinds) {
  describe(`refusals inside the admission step on the ${kind} stores`, () => {
    for (const seed of [0x5eed1, 0x5eed2, 0x5eed3]) {
      it.scoped(`a generated race for a count and a total answers and audits as the model says (seed ${seed.toString(16)})`, () =>
        Effect.gen(function*() {
          const random = prng(seed)
          const d = yield* openDurable(kind)
          const ex = yield* rig(d.context(), {
            executorKey: E, accept: [A], app: scripted(() => Effect.succeed(ok())).service, peers: { "spiffe://a": [A.did] }
          })
          const uses = 2 + random(6)
          const total = 5 + random(40)
          const w = writ(A, E, { act: act("pay"), uses: { t: "count", v: uses }, amount: { t: "total", v: total } })
          // The SQLite stores' context holds their batcher; the memory stores have none.
          const group = Option.getOrUndefined(Context.getOption(d.context(), GroupCommit))
          expect(group === undefined).toBe(kind === "memory")
          let usedCount = 0
          let usedTotal = 0
          const expected: Array<{ identity: string; peer: string; outcome: string; reason: string | null; signed: string }> = []
          for (let i = 0; i < 24; i++) {
            const amount = 1 + random(9)
            // Now and then a peer that does not speak for A: refused inside the step too (step 8).
            const wrongPeer = random(7) === 0
            const c = call(A, [w], "pay/now", { amount, i })
            const steps0 = group === undefined ? 0 : (yield* group.stats).steps
            const answer = yield* ex.call(c, wrongPeer ? Peer.named("spiffe://b") : Peer.named("spiffe://a"))
            if (answer._tag !== "tally") return yield* Effect.die(`call ${i} answered ${answer.reason}`)
            const model = wrongPeer
              ? "peer_mismatch"
              : usedCount + 1 > uses
              ? "count_exhausted"
              : usedTotal + amount > total
              ? "total_exhausted"
              : null
            if (model === null) {
              usedCount++
              usedTotal += amount
              expect(answer.tally.st).toBe("ok")
            } else {
              expect([answer.tally.st, codeOf(answer.tally)]).toEqual(["failed", model])
              // One store step for the refusal and its audit row.
              if (group !== undefined) expect((yield* group.stats).steps - steps0).toBe(1)
            }
            expected.push({ identity: identity(c), peer: wrongPeer ? "spiffe://b" : "spiffe://a", outcome: String(answer.tally.st), reason: codeOf(answer.tally), signed: identity(answer.tally) })
          }
          // A revoke of the writ: step 7 refuses inside the step, audited there.
          yield* ex.revoke(revoke(A, [w]))
          const late = call(A, [w], "pay/now", { amount: 1, late: true })
          const refused = yield* ex.call(late, Peer.named("spiffe://a"))
          if (refused._tag !== "tally") return yield* Effect.die("the revoked call was not answered with a tally")
          expect(codeOf(refused.tally)).toBe("revoked")
          expected.push({ identity: identity(late), peer: "spiffe://a", outcome: "failed", reason: "revoked", signed: identity(refused.tally) })
          const rows = (yield* Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())).filter((r) => r.kind === "call")
          expect(rows.map((r) => ({ identity: r.identity, peer: r.peer, outcome: r.outcome, reason: r.reason, signed: r.signed }))).toEqual(expected)
          // Every row carries the call's audit fields, as auditAnswer's base gives them.
          for (const r of rows) expect([r.principal, r.root, r.leaf, r.op]).toEqual([A.did, A.did, identity(w), "pay/now"])
          expect(rows.every((r) => r.time === T0)).toBe(true)
        }).pipe(Effect.withClock(settable().clock)))
    }
  })
}
