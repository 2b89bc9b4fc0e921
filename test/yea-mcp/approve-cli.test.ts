// A client without forms, end to end through the real command: the job server answers with an
// approval code, the person runs `mandate yea approve <code> --sqlite FILE` at a terminal (util-linux
// `script` gives the child one) and types the phrase; the agent's retried call then runs the plan
// once (SPEC-approval §5, docs/cli.md `approve`). A wrong phrase approves nothing. With the file store, approve finds the folder by YEA_STORE.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { errorLine, hasScript, homes, mandateAtTerminal, writeSeed } from "../yea-cli/run.js"
import { principalSeed, start, text } from "./harness.js"

const T = 240_000

describe("mandate yea approve with a job's approval code", () => {
  if (!hasScript) {
    it("skipped: util-linux script is not installed (it gives the child a terminal)", () => {
      console.log("skipped: util-linux script is not installed (it gives the child a terminal)")
    })
    return
  }
  it.live("the typed phrase approves the shown plan into the server's store; the retried call runs once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const s = yield* start({ transport: "stdio" })
        const h = homes()
        writeSeed(h.principalHome, "principal.key", principalSeed)
        const first = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))
        expect(first.isError).toBe(true)
        const code = (first.structuredContent as { codes: Array<{ code: string }> }).codes[0].code

        // A wrong phrase approves nothing: the retried call is still refused.
        const wrong = yield* Effect.promise(() => mandateAtTerminal(["yea", "approve", code, "--sqlite", s.db], h.env, "yes\n"))
        expect(wrong.status).toBe(1)
        expect(wrong.stdout).toContain("Refund 71.36 USD of ch_1")
        expect(errorLine(wrong)).toMatch(/^error: consent-invalid at mandate yea approve: not approved/)
        expect((yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))).isError).toBe(true)

        const right = yield* Effect.promise(() => mandateAtTerminal(["yea", "approve", code, "--sqlite", s.db], h.env, "approve\n"))
        expect(right.status).toBe(0)
        expect(right.stdout).toContain("approved: the agent's next call of this plan runs it, once")
        const retried = yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))
        expect(retried.isError).toBeFalsy()
        expect(text(retried)).toMatch(/^✓ Refund 71.36 USD of ch_1 \(receipt r_/)
        expect((yield* Effect.promise(() => s.call("refund", { charge: "ch_1", cents: 7136 }))).isError).toBe(true)
        expect((yield* Effect.promise(() => s.book())).applied).toEqual([{ tool: "refund", summary: "Refund 71.36 USD of ch_1" }])
      })
    ), T)

  it.live("with the file store (the server's --store, YEA_STORE for approve, no --sqlite) the approval reaches the server and the retried call runs once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = homes()
        const store = join(h.root, "store")
        const s = yield* start({ transport: "stdio", store })
        writeSeed(h.principalHome, "principal.key", principalSeed)
        const first = yield* Effect.promise(() => s.call("refund", { charge: "ch_2", cents: 7136 }))
        const code = (first.structuredContent as { codes: Array<{ code: string }> }).codes[0].code
        const right = yield* Effect.promise(() => mandateAtTerminal(["yea", "approve", code], { ...h.env, YEA_STORE: store }, "approve\n"))
        expect(right.status).toBe(0)
        expect(readdirSync(join(store, "consents")).length).toBe(1)
        expect(text(yield* Effect.promise(() => s.call("refund", { charge: "ch_2", cents: 7136 })))).toMatch(/^✓ Refund 71.36 USD of ch_2 \(receipt r_/)
        expect((yield* Effect.promise(() => s.call("refund", { charge: "ch_2", cents: 7136 }))).isError).toBe(true)
      })
    ), T)
})
