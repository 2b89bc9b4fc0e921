// A store write that fails at COMMIT, whether the store
// reports it as a StoreError or (as a SQL library running COMMIT can) dies with a defect, is handled
// as section 9 says. A revoke that cannot be persisted is answered with an unsigned error carrying
// the executor's code and honored for as long as the process runs; a call whose steps 9 and 10
// cannot be written gets a signed `failed` tally with that code and runs nothing; a call whose
// final tally cannot be written is answered pending. Each is logged and audited.
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Logger } from "effect"
import { Atomic, type AtomicService, Reservations } from "../../src/accounting/reservations.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import type { CallAnswer } from "../../src/writ/executor/executor.js"
import { STORE_UNAVAILABLE } from "../../src/writ/executor/services.js"
import { AuditLog } from "../../src/writ/executor/stores.js"
import { act, call, identity, key, ok, revoke, rig, scripted, settable, writ } from "./fixtures.js"
import { injected, kinds, openDurable, patch } from "./stores-support.js"

const A = key(1)
const B = key(2)
const E = key(3)

const tallyOf = (a: CallAnswer): JsonObject => {
  if (a._tag !== "tally") throw new Error(`expected a tally, got error ${a.reason}`)
  return a.tally
}

type How = "typed" | "defect"

/** Every atomic step, while `failing()`, runs its body and then fails at COMMIT (rolled back). */
const failingCommit = (how: How, failing: () => boolean) => (a: AtomicService): AtomicService => ({
  transaction: <X, Er, R>(self: Effect.Effect<X, Er, R>) =>
    Effect.suspend(() =>
      failing()
        ? a.transaction(Effect.zipLeft(
          self,
          how === "typed" ? injected("commit") : Effect.die(new Error("SQLITE_FULL: database or disk is full"))
        ))
        : a.transaction(self)
    )
})

/** Runs `self` with the log lines it writes collected in `lines`. */
const logged = (lines: Array<string>) =>
  Effect.provide(Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => void lines.push(Array.isArray(message) ? message.join(" ") : String(message)))
  ))

const chain = () => {
  const w1 = writ(A, B, { act: act("travel") })
  return [w1, writ(B, E, { act: act("travel"), uses: { t: "count", v: 2 } }, w1)] as const
}

for (const kind of kinds) {
  for (const how of ["typed", "defect"] as const) {
    describe(`a failed COMMIT (${how}) on the ${kind} stores`, () => {
      it.scoped("a revoke that cannot be persisted is answered with the executor's code and honored while running", () =>
        Effect.gen(function*() {
          const lines: Array<string> = []
          const d = yield* openDurable(kind)
          let failing = true
          const stores = patch(d.context(), Atomic, failingCommit(how, () => failing))
          const app = scripted(() => Effect.succeed(ok()))
          const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
          const [w1, w2] = chain()
          const answer = yield* ex.revoke(revoke(A, [])).pipe(logged(lines))
          expect(answer).toEqual({ _tag: "unsaved", code: STORE_UNAVAILABLE })
          expect(lines.some((l) => l.startsWith("revoke not persisted"))).toBe(true)
          // Honored for as long as the process runs, even once the store works again.
          failing = false
          const refused = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/x")))
          expect(refused.err).toEqual({ code: "revoked" })
          expect(app.log.length).toBe(0)
          const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
          expect(audit.map((e) => [e.kind, e.outcome, e.reason])).toEqual([
            ["revoke", "unsaved", STORE_UNAVAILABLE],
            ["call", "failed", "revoked"]
          ])
        }).pipe(Effect.withClock(settable().clock)))

      it.scoped("a call whose steps 9 and 10 cannot be committed gets a signed failed tally with the executor's code", () =>
        Effect.gen(function*() {
          const lines: Array<string> = []
          const d = yield* openDurable(kind)
          const stores = patch(d.context(), Atomic, failingCommit(how, () => true))
          const app = scripted(() => Effect.succeed(ok()))
          const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
          const [w1, w2] = chain()
          const c = call(B, [w1, w2], "travel/x")
          const refused = tallyOf(yield* ex.call(c).pipe(logged(lines)))
          expect([refused.st, refused.err, refused.call]).toEqual(["failed", { code: STORE_UNAVAILABLE }, identity(c)])
          yield* verifyTallyObject(refused, E.did)
          expect(app.log.length).toBe(0)
          expect(lines.some((l) => l.startsWith("store unavailable"))).toBe(true)
          const used = yield* Effect.provide(Effect.flatMap(Reservations, (r) => r.used(`writ/count/${identity(w2)}`)), d.context())
          expect(used).toBe(0n)
          const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
          expect(audit.map((e) => [e.identity, e.outcome, e.reason, e.signed])).toEqual([
            [identity(c), "failed", STORE_UNAVAILABLE, identity(refused)]
          ])
        }).pipe(Effect.withClock(settable().clock)))

      it.scoped("a call whose final tally cannot be committed is answered pending and resolved after a restart", () =>
        Effect.gen(function*() {
          const lines: Array<string> = []
          const d = yield* openDurable(kind)
          let failing = false
          const stores = patch(d.context(), Atomic, failingCommit(how, () => failing))
          // The operation runs, then the store fills up before step 12.
          const app = scripted(() => Effect.sync(() => (failing = true, ok({ done: true }))))
          const ex = yield* rig(stores, { executorKey: E, accept: [A], app: app.service })
          const [w1, w2] = chain()
          const c = call(B, [w1, w2], "travel/x")
          const first = tallyOf(yield* ex.call(c).pipe(logged(lines)))
          expect([first.st, first.err]).toEqual(["pending", { code: "pending" }])
          expect(lines.some((l) => l.startsWith("final tally not persisted"))).toBe(true)
          const audit = yield* Effect.provide(Effect.flatMap(AuditLog, (l) => l.read), d.context())
          expect(audit.map((e) => [e.outcome, e.signed])).toEqual([["pending", identity(first)]])
          const reopened = yield* d.reopen
          const ex2 = yield* rig(reopened, { executorKey: E, accept: [A], app: app.service })
          expect(yield* ex2.recover).toBe(1)
          expect(tallyOf(yield* ex2.call(c)).err).toEqual({ code: "unknown_outcome" })
          expect(app.log.length).toBe(1)
        }).pipe(Effect.withClock(settable().clock)))
    })
  }
}

// The same against a real SQLite store that refuses every write (query_only: SQLite's own
// "attempt to write a readonly database"), then works again: nothing mocked below the store.
describe("a real SQLite store that refuses writes", () => {
  it.scoped("a revoke is answered with the executor's code and honored after writes work again; a call is refused signed", () =>
    Effect.gen(function*() {
      const d = yield* openDurable("sqlite")
      const sql = Context.get(d.context() as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
      const app = scripted(() => Effect.succeed(ok()))
      const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
      const [w1, w2] = chain()
      yield* sql.unsafe("PRAGMA query_only = ON")
      expect(yield* ex.revoke(revoke(A, []))).toEqual({ _tag: "unsaved", code: STORE_UNAVAILABLE })
      const refused = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/x")))
      expect(refused.err).toEqual({ code: "revoked" })
      yield* sql.unsafe("PRAGMA query_only = OFF")
      // Writes work again; the unsaved revoke is still honored in this process (section 9).
      expect(tallyOf(yield* ex.call(call(B, [w1, w2], "travel/y"))).err).toEqual({ code: "revoked" })
      expect(app.log.length).toBe(0)
    }).pipe(Effect.withClock(settable().clock)))

  it.scoped("a call whose steps 9 and 10 cannot be written is refused with a signed store_unavailable tally", () =>
    Effect.gen(function*() {
      const d = yield* openDurable("sqlite")
      const sql = Context.get(d.context() as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
      const app = scripted(() => Effect.succeed(ok()))
      const ex = yield* rig(d.context(), { executorKey: E, accept: [A], app: app.service })
      const [w1, w2] = chain()
      yield* sql.unsafe("PRAGMA query_only = ON")
      const refused = tallyOf(yield* ex.call(call(B, [w1, w2], "travel/x")))
      expect([refused.st, refused.err]).toEqual(["failed", { code: STORE_UNAVAILABLE }])
      yield* verifyTallyObject(refused, E.did)
      expect(app.log.length).toBe(0)
      yield* sql.unsafe("PRAGMA query_only = OFF")
      expect(tallyOf(yield* ex.call(call(B, [w1, w2], "travel/x"))).st).toBe("ok")
    }).pipe(Effect.withClock(settable().clock)))
})
