// What every store of section 9 is asked to hold, as one atomic write per store and the read that
// shows it: shared by the restart and fault tests (stores.test.ts) and the test that a store file
// written before the Migrator still opens (test/store/migrations.test.ts).
import { Effect, Option } from "effect"
import { Reservations } from "../../src/accounting/reservations.js"
import {
  type AcceptedCall,
  AckStore,
  AuditLog,
  CallStore,
  DelegationStore,
  ReversalStore,
  RevokeStore,
  TallyStore
} from "../../src/writ/executor/stores.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"

export const accepted: AcceptedCall = {
  leaf: "L".repeat(43),
  id: "id-0000000000000000000001",
  call: "C".repeat(43),
  op: "travel/x",
  acc: 100,
  standing: false,
  chain: ["R".repeat(43), "L".repeat(43)],
  issuers: ["did:key:zA", "did:key:zB"],
  exp: 200,
  reservation: "writ/call/L/1"
}
export const tally = { v: 1, typ: "tally", call: "C".repeat(43), n: [1, "x", { "é": null }] }

export interface Case {
  readonly name: string
  /** One atomic write. */
  readonly write: Effect.Effect<void, unknown, StoreContext>
  /** What the store holds afterwards, as plain data (empty when nothing was written). */
  readonly read: Effect.Effect<unknown, unknown, StoreContext>
  readonly expected: unknown
}

export const cases: ReadonlyArray<Case> = [
  {
    name: "call store",
    write: Effect.gen(function*() {
      const s = yield* CallStore
      yield* s.insertPending(accepted)
      yield* s.finalize(accepted.leaf, accepted.id, tally, Option.some({ body: 1 }))
      yield* s.insertPending({ ...accepted, id: "id-0000000000000000000002" })
    }),
    read: Effect.gen(function*() {
      const s = yield* CallStore
      return { one: yield* s.get(accepted.leaf, accepted.id), pending: yield* s.pending }
    }),
    expected: {
      one: Option.some({ state: "final", accepted, tally, res: Option.some({ body: 1 }) }),
      pending: [{ ...accepted, id: "id-0000000000000000000002" }]
    }
  },
  {
    name: "count and total stores (Reservations keys)",
    write: Effect.flatMap(Reservations, (r) =>
      r.reserve({
        id: "writ/call/L/1",
        limits: [{ key: "writ/count/W", limit: 1n, amount: 1n }, { key: "writ/total/W/amount", limit: 600n, amount: 400n }],
        onFailure: "consume"
      })),
    read: Effect.gen(function*() {
      const r = yield* Reservations
      return [yield* r.used("writ/count/W"), yield* r.used("writ/total/W/amount")]
    }),
    expected: [1n, 400n]
  },
  {
    name: "tally store",
    write: Effect.flatMap(TallyStore, (s) =>
      Effect.all([
        s.put({ tally: "T2", call: "C2", acc: 5, forward: true, chain: ["W1", "W2"], issuers: ["k1", "k2"], object: tally, res: Option.none() }),
        s.put({ tally: "T1", call: "C1", acc: 5, forward: false, chain: ["W1"], issuers: ["k1"], object: tally, res: Option.some([1]) }),
        s.put({ tally: "T0", call: "C0", acc: 9, forward: true, chain: ["W1"], issuers: ["k1"], object: tally, res: Option.none() })
      ])),
    read: Effect.gen(function*() {
      const s = yield* TallyStore
      return {
        w1: (yield* s.underWrit("W1")).map((t) => t.tally),
        w2: (yield* s.underWrit("W2")).map((t) => t.tally),
        k2: (yield* s.underIssuer("k2")).map((t) => t.tally),
        t1: Option.map(yield* s.get("T1"), (t) => [t.forward, t.res, t.object])
      }
    }),
    // Ascending acc, ties by identity (section 8.2).
    expected: { w1: ["T1", "T2", "T0"], w2: ["T2"], k2: ["T2"], t1: Option.some([false, Option.some([1]), tally]) }
  },
  {
    name: "revoke store",
    write: Effect.flatMap(RevokeStore, (s) =>
      Effect.all([
        s.record({ revoke: "R1", writ: "W1", iss: "k1", exp: 50, rcv: 10 }),
        s.record({ revoke: "R2", writ: "*", iss: "k9", exp: null, rcv: 11 })
      ])),
    read: Effect.gen(function*() {
      const s = yield* RevokeStore
      return [yield* s.covers(["W0", "W1"], []), yield* s.covers(["W2"], ["k9"]), yield* s.covers(["W2"], ["k1"])]
    }),
    expected: [true, true, false]
  },
  {
    name: "reversal store",
    write: Effect.flatMap(ReversalStore, (s) =>
      Effect.all([s.begin("T1", "C1"), s.begin("T2", "C2"), s.succeed("T2", "C3", Option.some({ refund: 1 })), s.begin("T3", "C4"), s.clear("T3")])),
    read: Effect.gen(function*() {
      const s = yield* ReversalStore
      return [yield* s.get("T1"), yield* s.get("T2"), yield* s.get("T3")]
    }),
    expected: [
      Option.some({ state: "begun", call: "C1" }),
      Option.some({ state: "succeeded", call: "C3", res: Option.some({ refund: 1 }) }),
      Option.none()
    ]
  },
  {
    name: "delegation store (issued writs and sub-tallies)",
    write: Effect.flatMap(DelegationStore, (s) =>
      Effect.all([
        s.recordIssued({ leaf: "L", id: "i", writ: "X", hld: "kC", above: ["W1", "L"], aboveIssuers: ["kA", "kB"], object: { w: 1 } }),
        s.recordSub({ leaf: "L", id: "i", subCall: "S1", signer: "kC", object: { st: "pending" } }),
        s.recordSub({ leaf: "L", id: "i", subCall: "S1", signer: "kC", object: { st: "ok" } })
      ])),
    read: Effect.gen(function*() {
      const s = yield* DelegationStore
      return {
        call: yield* s.forCall("L", "i"),
        under: (yield* s.issuedUnder("W1", "")).map((w) => w.hld),
        wide: (yield* s.issuedUnder("*", "kB")).map((w) => w.writ)
      }
    }),
    // A final sub-tally replaces the pending one for the same sub-call (section 7.5).
    expected: { call: { wrt: [{ w: 1 }], sub: [{ st: "ok" }] }, under: ["kC"], wide: ["X"] }
  },
  {
    name: "ack store (relayed acks)",
    write: Effect.flatMap(AckStore, (s) =>
      Effect.all([
        s.keep({ revoke: "R", ack: "B", object: { a: 2 }, res: { held: [], open: [] } }),
        s.keep({ revoke: "R", ack: "A", object: { a: 1 }, res: { held: [], open: [] } }),
        s.keep({ revoke: "R", ack: "A", object: { a: 1 }, res: { held: [], open: [] } })
      ])),
    read: Effect.map(Effect.flatMap(AckStore, (s) => s.forRevoke("R")), (k) => k.map((x) => x.ack)),
    expected: ["A", "B"]
  },
  {
    name: "audit record",
    write: Effect.flatMap(AuditLog, (s) =>
      s.append({
        time: 1, kind: "call", identity: "I", unparsed: null, principal: "k", peer: null, root: "r", leaf: "l",
        op: "o", outcome: "ok", reason: null, signed: "T"
      })),
    read: Effect.map(Effect.flatMap(AuditLog, (s) => s.read), (e) => e.map((x) => [x.identity, x.outcome, x.signed])),
    expected: [["I", "ok", "T"]]
  }
]
