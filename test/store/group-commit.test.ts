// Group commit on the embedded store (src/store/sqlite/group-commit.ts): steps
// queued while a batch runs are committed together, one transaction; each caller is answered only
// once its batch committed (a second connection on the file already sees its write); a step that
// fails rolls back only its own writes; a batch whose COMMIT fails fails every step in it and keeps
// nothing (a real fault: the store file made read-only mid-batch). A batch is held open by a first
// step that waits for the test, so what the next batch holds is decided, not timed.
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import Database from "better-sqlite3"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqliteStore from "../../src/store/sqlite/client.js"
import { GroupCommit, layer as groupCommitLayer } from "../../src/store/sqlite/group-commit.js"
import { expectStoreError } from "./support.js"
import { chattr, immutableSupported as supportsImmutable } from "../support/immutable.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-group-commit-"))
let files = 0

/** A store file with a table `t`, group commit over it, and a second (read-only) connection. */
const open = Effect.gen(function*() {
  const file = join(dir, `store-${++files}.db`)
  const ctx = yield* Layer.build(
    Layer.mergeAll(
      groupCommitLayer(),
      Layer.effectDiscard(SqliteStore.migrate({
        table: "mandate_migrations_test_group",
        migrations: { "1_t": ["CREATE TABLE t (k TEXT PRIMARY KEY)"] }
      }))
    ).pipe(Layer.provideMerge(SqliteStore.layer(file)))
  )
  const g = yield* Effect.provide(GroupCommit, ctx)
  const sql = yield* Effect.provide(SqlClient.SqlClient, ctx)
  const reader = new Database(file, { readonly: true, fileMustExist: true })
  yield* Effect.addFinalizer(() => Effect.sync(() => reader.close()))
  const seen = () => (reader.prepare("SELECT k FROM t ORDER BY k").all() as Array<{ k: string }>).map((r) => r.k)
  const insert = (k: string) => Effect.asVoid(sql`INSERT INTO t (k) VALUES (${k})`)
  return { file, g, insert, seen }
})

/** Waits until `fiber` is suspended: a step submitted to the batcher waits there for its batch. */
const suspended = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Effect.gen(function*() {
    for (;;) {
      const status = yield* Fiber.status(fiber)
      if (status._tag === "Suspended") return
      yield* Effect.yieldNow()
    }
  })

/** Holds the batcher in a batch of its own (its step is running) until `release`. */
const hold = (g: GroupCommit["Type"]) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(g.run(Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))))
    yield* Deferred.await(started)
    return { release: Deferred.succeed(release, undefined), holder }
  })

describe("group commit (SQLite)", () => {
  it.scopedLive("steps queued during a batch commit together, each answered after its COMMIT", () =>
    Effect.gen(function*() {
      const { g, insert, seen } = yield* open
      const { holder, release } = yield* hold(g)
      const before = yield* g.stats
      const steps = yield* Effect.forEach(["a", "b", "c", "d", "e"], (k) =>
        Effect.fork(Effect.map(g.run(insert(k)), () => seen().includes(k))))
      for (const f of steps) yield* suspended(f)
      expect(seen()).toEqual([])
      yield* release
      yield* Fiber.join(holder)
      // Each caller, when answered, already finds its row through another connection: committed.
      expect(yield* Effect.forEach(steps, Fiber.join)).toEqual([true, true, true, true, true])
      const after = yield* g.stats
      // The five were one batch, after the holder's.
      expect([after.batches - before.batches, after.steps - before.steps, after.largest]).toEqual([2, 6, 5])
      expect(seen()).toEqual(["a", "b", "c", "d", "e"])
    }))

  it.scopedLive("a step that fails rolls back only its own writes; the others in its batch commit", () =>
    Effect.gen(function*() {
      const { g, insert, seen } = yield* open
      const { holder, release } = yield* hold(g)
      const a = yield* Effect.fork(g.run(insert("a")))
      yield* suspended(a)
      const b = yield* Effect.fork(g.run(Effect.zipRight(insert("b"), Effect.fail("refused" as const))))
      yield* suspended(b)
      // A write that breaks a constraint inside the step: the statement fails, the step with it.
      const dup = yield* Effect.fork(g.run(Effect.zipRight(insert("c"), insert("a"))))
      yield* suspended(dup)
      const d = yield* Effect.fork(g.run(insert("d")))
      yield* suspended(d)
      yield* release
      yield* Fiber.join(holder)
      expect(Exit.isSuccess(yield* Fiber.await(a))).toBe(true)
      expect(yield* Fiber.await(b)).toEqual(Exit.fail("refused"))
      expect(Exit.isFailure(yield* Fiber.await(dup))).toBe(true)
      expect(Exit.isSuccess(yield* Fiber.await(d))).toBe(true)
      expect(seen()).toEqual(["a", "d"])
      expect((yield* g.stats).largest).toBe(4)
    }))

  it.scopedLive("a step inside a step joins its transaction instead of waiting for a batch", () =>
    Effect.gen(function*() {
      const { g, insert, seen } = yield* open
      const inner = yield* g.run(Effect.zipRight(insert("outer"), Effect.either(g.run(Effect.zipRight(insert("inner"), Effect.fail("no"))))))
      expect(inner._tag).toBe("Left")
      // The inner step was a savepoint: rolled back alone, the outer committed.
      expect(seen()).toEqual(["outer"])
    }))
})

const immutableSupported = supportsImmutable(dir, "the failed group COMMIT test is")

describe("group commit (SQLite), a COMMIT that fails", () => {
  it.scopedLive.skipIf(!immutableSupported)("fails every step of the batch with a StoreError and keeps none of them", () =>
    Effect.gen(function*() {
      const { file, g, insert, seen } = yield* open
      const locked = [file, `${file}-wal`]
      yield* Effect.addFinalizer(() => Effect.sync(() => chattr("-i", locked)))
      yield* g.run(insert("before"))
      const { holder, release } = yield* hold(g)
      const a = yield* Effect.fork(g.run(insert("a")))
      yield* suspended(a)
      const b = yield* Effect.fork(g.run(insert("b")))
      yield* suspended(b)
      // The last step of the batch makes the file read-only: its writes sit in the page cache, and
      // the batch's COMMIT cannot write them to the WAL.
      const c = yield* Effect.fork(g.run(Effect.zipRight(insert("c"), Effect.sync(() => expect(chattr("+i", locked)).toBe(true)))))
      yield* suspended(c)
      yield* release
      yield* Fiber.join(holder)
      for (const f of [a, b, c]) expectStoreError(yield* Fiber.await(f), /^sqlite\.commit$/)
      expect(chattr("-i", locked)).toBe(true)
      expect(seen()).toEqual(["before"])
      // The store is whole again: the next batch commits.
      yield* g.run(insert("after"))
      expect(seen()).toEqual(["after", "before"])
    }))
})
