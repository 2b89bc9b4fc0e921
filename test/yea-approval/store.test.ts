// The approval store (SPEC-approval §8 and "Testing"), one behavioural suite on memory and on
// SQLite: consume-once under concurrent calls, undo claimed once, spend totals reserved atomically
// (never past the max), released and settled; and the SQLite file shared by two connections, as a
// stdio server and `mandate yea approve` share it.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { NodeContext } from "@effect/platform-node"
import { mkdtempSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ApprovalStore, memoryApprovalStore, type JobReceipt } from "../../src/yea/approval/index.js"
import { approvalLayer } from "../../src/store/sqlite/approval.js"
import { SqliteStore } from "../../src/store/sqlite/client.js"
import { fileApprovalLayer } from "../../src/store/file/approval.js"
import { RandomBytes } from "../../src/kernel/services.js"

const sqliteAt = (file: string) => approvalLayer.pipe(Layer.provide(SqliteStore.layer(file)))
const fileAt = (dir: string) => fileApprovalLayer(dir).pipe(Layer.provide(Layer.merge(NodeContext.layer, RandomBytes.live)))
const freshFile = () => join(mkdtempSync(join(tmpdir(), "approval-store-")), "a.sqlite")

const receipt = (id: string): JobReceipt => ({
  id,
  service: "S",
  proposal: "H",
  capability: "reschedule",
  summary: "Move standup",
  at: 1,
  effects: [],
  undo: { until: 60 },
  tool: "reschedule",
  input: { event: "e1" },
  planHash: "H",
  sub: ""
})

const suite = (name: string, layer: () => Layer.Layer<ApprovalStore, unknown>) =>
  describe(`approval store: ${name}`, () => {
    it.effect("consumeOnce is true exactly once, even for 20 concurrent calls", () =>
      Effect.gen(function* () {
        const store = yield* ApprovalStore
        const results = yield* Effect.all(Array.from({ length: 20 }, () => store.consumeOnce("n_1", 100)), { concurrency: "unbounded" })
        expect(results.filter((x) => x).length).toBe(1)
        expect(yield* store.consumeOnce("n_2", 100)).toBe(true)
      }).pipe(Effect.provide(layer()), Effect.orDie), { timeout: 60_000 })

    it.effect("an undo is claimed once; receipts and consents read back", () =>
      Effect.gen(function* () {
        const store = yield* ApprovalStore
        yield* store.putReceipt(receipt("r_AAAAAAAAAAAA"))
        expect(Option.getOrThrow(yield* store.getReceipt("r_AAAAAAAAAAAA")).summary).toBe("Move standup")
        expect(Option.isNone(yield* store.getReceipt("r_BBBBBBBBBBBB"))).toBe(true)
        const claims = yield* Effect.all([store.claimUndo("r_AAAAAAAAAAAA"), store.claimUndo("r_AAAAAAAAAAAA")], { concurrency: "unbounded" })
        expect(claims.filter((x) => x).length).toBe(1)
        yield* store.markUndone("r_AAAAAAAAAAAA")
        expect(yield* store.isUndone("r_AAAAAAAAAAAA")).toBe(true)
        yield* store.putConsent("H", "pg1.a")
        expect(Option.getOrNull(yield* store.getConsent("H"))).toBe("pg1.a")
      }).pipe(Effect.provide(layer()), Effect.orDie), { timeout: 60_000 })

    it.effect("reserve is all or nothing and never passes a max; release frees, settle keeps", () =>
      Effect.gen(function* () {
        const store = yield* ApprovalStore
        const key = { block: "B", of: "emails" }
        const draw = (amount: bigint) => [{ key, amount, max: 3n }]
        const held = yield* Effect.all(Array.from({ length: 6 }, () => store.reserve(draw(1n))), { concurrency: "unbounded" })
        expect(held.filter(Option.isSome).length).toBe(3)
        expect(yield* store.used("B", "emails")).toBe(3n)
        // Both draws or neither: the second key has room, the first doesn't.
        const both = yield* store.reserve([{ key: { block: "B", of: "spend" }, amount: 1n, max: 10n }, { key, amount: 1n, max: 3n }])
        expect(Option.isNone(both)).toBe(true)
        expect(yield* store.used("B", "spend")).toBe(0n)
        const ids = held.filter(Option.isSome).map((o) => o.value)
        yield* store.release(ids[0])
        yield* store.settle(ids[1])
        expect(yield* store.used("B", "emails")).toBe(2n)
      }).pipe(Effect.provide(layer()), Effect.orDie), { timeout: 60_000 })
  })

suite("memory", () => memoryApprovalStore)
suite("sqlite", () => sqliteAt(freshFile()))
suite("file", () => fileAt(mkdtempSync(join(tmpdir(), "approval-files-"))))

describe("approval store: one folder, two stores (a stdio server and `mandate yea approve`)", () => {
  it.effect("a consent, a marker and a reservation written by one are seen by the other; files are 0600 in a 0700 folder; a bad key or a malformed ledger fails typed", () =>
    Effect.gen(function* () {
      const dir = join(mkdtempSync(join(tmpdir(), "approval-files-")), "store")
      const a = yield* Effect.provide(ApprovalStore, fileAt(dir))
      const b = yield* Effect.provide(ApprovalStore, fileAt(dir))
      yield* a.putConsent("H", "pg1.c\n")
      expect(Option.getOrNull(yield* b.getConsent("H"))).toBe("pg1.c")
      expect(yield* a.consumeOnce("consent:g", 9)).toBe(true)
      expect(yield* b.consumeOnce("consent:g", 9)).toBe(false)
      const key = { block: "B", of: "spend" }
      const r = yield* a.reserve([{ key, amount: 2n, max: 3n }])
      expect(Option.isNone(yield* b.reserve([{ key, amount: 2n, max: 3n }]))).toBe(true)
      yield* b.settle(Option.getOrThrow(r))
      expect(yield* a.used("B", "spend")).toBe(3n - 1n)
      expect(statSync(dir).mode & 0o777).toBe(0o700)
      expect(statSync(join(dir, "consents", "H")).mode & 0o777).toBe(0o600)
      expect((yield* Effect.flip(a.getConsent("../x"))).code).toBe("store-unavailable")
      writeFileSync(join(dir, "ledger", "B", "spend.json"), "{")
      expect((yield* Effect.flip(a.used("B", "spend"))).code).toBe("store-unavailable")
    }).pipe(Effect.provide(NodeContext.layer), Effect.orDie), { timeout: 60_000 })
})

describe("approval store: one SQLite file, two connections", () => {
  it.effect("a consent written through one connection is read and consumed once through the other", () =>
    Effect.gen(function* () {
      const file = freshFile()
      yield* Effect.flatMap(ApprovalStore, (s) => s.putConsent("H", "pg1.c")).pipe(Effect.provide(sqliteAt(file)))
      const read = yield* Effect.flatMap(ApprovalStore, (s) => Effect.zip(s.getConsent("H"), s.consumeOnce("consent:g", 9))).pipe(Effect.provide(sqliteAt(file)))
      expect(Option.getOrNull(read[0])).toBe("pg1.c")
      expect(read[1]).toBe(true)
      const again = yield* Effect.flatMap(ApprovalStore, (s) => s.consumeOnce("consent:g", 9)).pipe(Effect.provide(sqliteAt(file)))
      expect(again).toBe(false)
    }).pipe(Effect.orDie), { timeout: 60_000 })

  it.effect("a store that can't be opened fails with a typed error, not a crash", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(Effect.flatMap(ApprovalStore, (s) => s.consumeOnce("x", 1)).pipe(Effect.provide(sqliteAt("/nonexistent-dir/x/a.sqlite"))))
      expect((e as { _tag: string })._tag).toBe("StoreError")
    }), { timeout: 60_000 })
})
