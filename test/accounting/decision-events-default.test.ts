// Optional services default on their tag (Context.Reference): with no ledger configured the
// DecisionEvents read by the YEA runtime and the Writ executor is the one that drops every event,
// and one provided replaces it; the CLI's CommandPath is `mandate` outside main.ts.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DecisionEvents, type ProtocolDecision, publishDecision } from "../../src/accounting/decision-events.js"
import { CommandPath } from "../../src/cli/where.js"

const decision: ProtocolDecision = { protocol: "writ", kind: "accepted", principal: "p", subject: "s" }

describe("optional services on their tag", () => {
  it.effect("DecisionEvents without a Layer drops the event; a provided one receives it", () =>
    Effect.gen(function*() {
      const events = yield* DecisionEvents
      yield* events.publish(decision)
      yield* publishDecision(decision)
      const seen: Array<ProtocolDecision> = []
      yield* publishDecision(decision).pipe(
        Effect.provideService(DecisionEvents, { publish: (e) => Effect.sync(() => void seen.push(e)) })
      )
      expect(seen).toEqual([decision])
    }))

  it.effect("CommandPath is mandate unless main.ts says otherwise", () =>
    Effect.gen(function*() {
      expect(yield* CommandPath).toBe("mandate")
      expect(yield* Effect.provideService(CommandPath, "mandate writ issue")(CommandPath)).toBe("mandate writ issue")
    }))
})
