// `mandate yea demo` passes end to end on all three transports (run as a user
// would, as a child process), and a test drives the same flow in-process over TCP and the HTTP
// bridge, where a failed check names itself.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runDemo } from "../../src/examples/yea-demo.js"
import { stateLayer } from "../../src/app/yea-serve.js"
import { demoLegs } from "../../src/cli/yea-demo.js"
import { runMandate } from "../support/cli.js"
import { AGENT, PRINCIPAL } from "../yea/_helpers.js"

describe("mandate yea demo", () => {
  it("passes on yea://, stdio: and the HTTP bridge, and exits 0", async () => {
    const ran = await runMandate(["yea", "demo"], 240_000, "SIGKILL")
    expect(ran.stdout).toContain("yea:// (TCP): 20/20 checks passed")
    expect(ran.stdout).toContain("stdio:: 20/20 checks passed")
    expect(ran.stdout).toContain("HTTP bridge: 20/20 checks passed")
    expect(ran.status).toBe(0)
  }, 250_000)

  for (const [name, leg] of demoLegs({ principal: PRINCIPAL, agent: AGENT }, []).filter(([n]) => n !== "stdio:")) {
    it.live(`the same flow in-process on ${name}`, () =>
      Effect.gen(function* () {
        const reach = yield* leg
        const result = yield* runDemo(reach, { principal: PRINCIPAL, agent: AGENT }, () => Effect.void)
        expect(result.failures).toEqual([])
        expect(result.checks).toBe(20)
      }).pipe(Effect.scoped, Effect.provide(stateLayer())), 120_000)
  }
})
