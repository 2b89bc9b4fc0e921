// mcp-proxy while the server waits on a form (proxy.ts, "Forms"): the fixture's `ask` tool sends
// an elicitation mid-call; until the client answers, the open call gets progress under the
// client's token. The person answers only once the call has had 3 of them: without the progress
// the form would never be answered and the test would not end.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { anyTool, call, grant, session, statusOf } from "./support.js"

describe("mcp-proxy: forms", () => {
  it.live("progress to the open call while the client answers the server's form; the call then verifies", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* grant({ act: anyTool, uses: { t: "count", v: 2 } }), keepAlive: "100 millis" })
      let progress = 0
      let wake: (() => void) | undefined
      s.elicit = async () => {
        if (progress < 3) await new Promise<void>((r) => (wake = r))
        return { action: "accept", content: { answer: "yes" } }
      }
      const answered = yield* call(s.client, "ask", {}, {
        onprogress: () => {
          progress++
          if (progress >= 3) wake?.()
        }
      })
      expect(progress).toBeGreaterThanOrEqual(3)
      expect(statusOf(answered)).toBe("ok")
      expect(answered._tag === "result" && answered.result.structuredContent).toEqual({ action: "accept", content: { answer: "yes" } })
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
