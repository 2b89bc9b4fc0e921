// A form a person fills in mid-call (docs/mcp-gate.md "Which methods a grant governs", last
// paragraph): server-everything's `trigger-elicitation-request` asks the client through the gate
// and the proxy. While the form is open the gate sends progress under the client's token, so a
// client that restarts its time limit on progress keeps the call; the gate's own limit toward the
// server (here 1 s) is paused. The person answers only once the call has been kept alive several
// times: without the progress the form would never be answered and the test would not end.
import { describe, expect, it } from "@effect/vitest"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { call, grant, statusOf } from "./support.js"
import { everythingServer, firstText, gateSession } from "./gate-support.js"

describe("writ mcp-gate: approval forms", () => {
  it.live("progress while the person types; the call survives the gate's time limit and verifies", () =>
    Effect.gen(function*() {
      const s = yield* gateSession({
        grant: yield* grant({ act: { t: "prefix", v: "mcp/tools/" }, uses: { t: "count", v: 2 } }),
        upstream: everythingServer(),
        gate: { timeout: "1 second", keepAlive: "200 millis" }
      })
      let progress = 0
      let wake: (() => void) | undefined
      s.client.setRequestHandler(ElicitRequestSchema, async () => {
        // The person takes their time: they answer after the call was kept alive 8 times.
        if (progress < 8) await new Promise<void>((r) => (wake = r))
        return { action: "decline" }
      })
      const answered = yield* call(s.client, "trigger-elicitation-request", {}, {
        onprogress: () => {
          progress++
          if (progress >= 8) wake?.()
        }
      })
      expect(progress).toBeGreaterThanOrEqual(8)
      expect(statusOf(answered)).toBe("ok")
      expect(answered._tag === "result" && firstText(answered.result)).toContain("declined")
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
