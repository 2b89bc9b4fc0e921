// Section 14.1: every reference scenario passes against the real executor on both store Layers.
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { runScenarioDir, tally } from "../../src/cli/writ-scenarios.js"
import { failureLines } from "../../src/writ/executor/scenario.js"
import { sharedPath } from "../support/shared.js"

const dir = sharedPath("reference", "writ", "scenarios")

describe.skipIf(!dir)("reference executor scenarios (section 14.1)", () => {
  for (const store of ["sqlite", "memory"] as const) {
    // Live: the runner waits on real time to tell a held call from a slow one (section 14.1).
    it.live(`every scenario passes on the ${store} stores`, () => Effect.gen(function*() {
      const results = yield* runScenarioDir(dir!, [store]).pipe(Effect.provide(NodeContext.layer))
      const lines = results.flatMap((r) => failureLines(`${r.file} (${r.store})`, r.result))
      expect(lines).toEqual([])
      const { passed, failed } = tally(results)
      expect(failed).toBe(0)
      expect(passed).toBeGreaterThanOrEqual(20)
    }))
  }
})
