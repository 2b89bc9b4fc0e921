// A proposal runs at most once in any YEA service, not only the OpenAPI adapter (SPEC §4.4 "MUST
// NOT execute again", §4.5): a service whose handlers count their runs, over an in-process
// connection. A caller interrupted mid-COMMIT does not interrupt the commit, whose receipt every
// later COMMIT answers; a commit handler that refuses is not run again (its refusal is answered);
// an UNDO that fails after acting is not run again (its unknown outcome is answered `conflict`).
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { FinalReply } from "../../src/yea/frame.js"
import { yeaError, type YeaReason } from "../../src/yea/reason.js"
import { intent, plans } from "../../src/yea/service/define.js"
import { makeService } from "../../src/yea/service/runtime.js"
import { issue, principalKey } from "../yea/_helpers.js"
import { clientOf, stores } from "./support.js"

const shape = (r: FinalReply) => (r.kind === "RECEIPT" ? `RECEIPT ${r.receipt.id}${r.replay === true ? " replay" : ""}` : r.kind === "ERROR" ? `ERROR ${r.code}: ${r.message}` : r.kind)

/** A service whose commit waits for `gate` and then fails with `commitFails` (if set), and whose undo fails with `undoFails`. */
const counted = (options: { readonly gate?: Deferred.Deferred<void>; readonly commitFails?: YeaReason; readonly undoFails?: YeaReason }) => {
  const runs = { commits: 0, undos: 0 }
  const service = makeService({
    id: "moves.example",
    name: "Moves",
    trust: [principalKey],
    capabilities: {
      "moves.move": intent({
        risk: "low",
        plan: () => Effect.succeed(plans({ summary: "move one", effects: [{ op: "update", target: "thing" }], undoWindow: 600, action: { n: 1 } })),
        commit: () =>
          Effect.gen(function* () {
            runs.commits++
            if (options.gate !== undefined) yield* Deferred.await(options.gate)
            if (options.commitFails !== undefined) return yield* Effect.fail(yeaError(options.commitFails, "the handler said no"))
            return { moved: runs.commits }
          }),
        undo: () =>
          Effect.gen(function* () {
            runs.undos++
            if (options.undoFails !== undefined) return yield* Effect.fail(yeaError(options.undoFails, "acted, then failed"))
            return { back: runs.undos }
          })
      })
    }
  })
  return { runs, service }
}

const grant = issue([{ svc: ["moves.example"] }])

const proposalOf = (r: FinalReply) => {
  if (r.kind !== "PROPOSALS") throw new Error(shape(r))
  return r.proposals[0]
}

describe("YEA: a proposal runs at most once (any service)", () => {
  it.live("a caller interrupted mid-COMMIT: the commit runs once, to its end; every later COMMIT answers its receipt", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { runs, service } = counted({ gate })
      const agent = yield* clientOf(yield* service, { grants: [grant] })
      yield* agent.hello()
      const p = proposalOf(yield* agent.intent("moves.move", {}))
      const first = yield* Effect.fork(agent.commit(p))
      while (runs.commits === 0) yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      // Still running in this instance: a retry is told to come back, not run again.
      const ranAgain = Effect.gen(function* () {
        while (runs.commits < 2) yield* Effect.sleep("5 millis")
        return "ran again"
      })
      expect(yield* Effect.raceFirst(Effect.map(agent.commit(p), shape), ranAgain)).toBe("ERROR unavailable: this proposal is being committed")
      yield* Deferred.succeed(gate, undefined)
      let after = yield* agent.commit(p)
      while (after.kind === "ERROR" && after.code === "unavailable") {
        yield* Effect.sleep("10 millis")
        after = yield* agent.commit(p)
      }
      expect(runs.commits).toBe(1)
      expect(after.kind === "RECEIPT" && after.replay).toBe(true)
      expect(shape(yield* agent.commit(p))).toBe(shape(after))
    }).pipe(Effect.provide(stores)))

  it.live("a commit handler that refuses is not run again: its refusal is every later COMMIT's answer", () =>
    Effect.gen(function* () {
      const { runs, service } = counted({ commitFails: "conflict" })
      const agent = yield* clientOf(yield* service, { grants: [grant] })
      yield* agent.hello()
      const p = proposalOf(yield* agent.intent("moves.move", {}))
      const replies = [yield* agent.commit(p), yield* agent.commit(p), yield* agent.commit(p)]
      expect(runs.commits).toBe(1)
      expect(replies.map(shape)).toEqual(Array(3).fill("ERROR conflict: the handler said no"))
    }).pipe(Effect.provide(stores)))

  it.live("an UNDO that fails after acting is not run again: re-UNDOs answer its unknown outcome", () =>
    Effect.gen(function* () {
      const { runs, service } = counted({ undoFails: "unavailable" })
      const agent = yield* clientOf(yield* service, { grants: [grant] })
      yield* agent.hello()
      const receipt = yield* agent.commit(proposalOf(yield* agent.intent("moves.move", {})))
      if (receipt.kind !== "RECEIPT") throw new Error(shape(receipt))
      const replies = [yield* agent.undo(receipt.receipt.id), yield* agent.undo(receipt.receipt.id), yield* agent.undo(receipt.receipt.id)]
      expect(runs.undos).toBe(1)
      expect(replies[0].kind === "ERROR" && replies[0].code).toBe("conflict")
      expect(replies[0].kind === "ERROR" && replies[0].message).toContain("acted, then failed")
      expect(new Set(replies.map(shape)).size).toBe(1)
    }).pipe(Effect.provide(stores)))
})
