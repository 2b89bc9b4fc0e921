// The relay in both directions at once (docs/bindings.md, "Both directions at once" and
// "Shutdown"): a server request answered while its tool call is open, other calls interleaved with
// an open one, a cancellation reaching the server under its own id for the call, progress
// notifications under the client's token, the server exiting with a call open, and the client
// leaving while the server waits on it. Every wait is bounded (a deadlock fails, never hangs).
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import { anyTool, call, grant, session, statusOf } from "./support.js"

const counted = (n: number) => grant({ act: anyTool, uses: { t: "count", v: n } })
const resultOf = (o: { readonly _tag: string; readonly result?: JsonObject }) => (o._tag === "result" ? o.result! : ({} as JsonObject))

describe("mcp-proxy: both directions", () => {
  it.live("elicitation mid-call, calls interleaved with an open one, cancellation, progress", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* counted(20) })
      // A call held open by the server until it is canceled.
      const abort = new AbortController()
      const slow = yield* Effect.fork(call(s.client, "slow", {}, { signal: abort.signal }))
      // The server asks the client mid-call; the client's answer reaches it while `slow` is open.
      const asked = yield* call(s.client, "ask")
      expect(statusOf(asked)).toBe("ok")
      expect(resultOf(asked).structuredContent).toEqual({ action: "accept", content: { answer: "yes" } })
      // Other requests pass meanwhile.
      yield* Effect.promise(() => s.client.ping())
      expect(statusOf(yield* call(s.client, "echo", { text: "meanwhile" }))).toBe("ok")
      // Progress under the client's token (passed in _meta beside the Writ call).
      const seen: Array<unknown> = []
      const p = yield* call(s.client, "progress", {}, { onprogress: (x) => seen.push(x) })
      expect(statusOf(p)).toBe("ok")
      expect(seen.length).toBe(2)
      // Cancel the open call: the server sees the cancellation under the id it knows it by.
      abort.abort("test")
      const canceled = yield* Fiber.join(slow)
      expect(canceled._tag).toBe("error")
      let aborted: unknown = 0
      for (let i = 0; i < 40 && aborted !== 1; i++) {
        aborted = (resultOf(yield* call(s.client, "aborted")).structuredContent as JsonObject | undefined)?.aborted
        if (aborted !== 1) yield* Effect.sleep("250 millis")
      }
      expect(aborted).toBe(1)
      // The canceled call is not kept: every receipt is of a call the client saw answered.
      const tools = (yield* s.receipts).map((r) => r.tool)
      expect(tools).not.toContain("slow")
      expect(tools.slice(0, 3)).toEqual(["ask", "echo", "progress"])
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("the server exiting with a call open answers it unreachable_server, and the proxy ends", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* counted(5) })
      const slow = yield* Effect.fork(call(s.client, "slow"))
      // Wait (bounded) until the server holds the call: `aborted` answering shows it is serving.
      expect(statusOf(yield* call(s.client, "aborted"))).toBe("ok")
      const pid = s.server.pid
      expect(pid).not.toBeNull()
      process.kill(pid!, "SIGTERM")
      const o = yield* Fiber.join(slow).pipe(Effect.timeout("60 seconds"))
      expect(statusOf(o)).toBe("unreachable_server")
      const ended = yield* Fiber.await(s.proxy).pipe(Effect.timeoutOption("30 seconds"))
      expect(Option.isSome(ended)).toBe(true)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("the client leaving while the server waits on it: the server's request is answered with an error and everything stops", () =>
    Effect.gen(function*() {
      const s = yield* session({ grant: yield* counted(5) })
      const asked = yield* Deferred.make<void>()
      // The client never answers the elicitation; it closes instead.
      s.elicit = () => {
        Deferred.unsafeDone(asked, Effect.void)
        return new Promise(() => {})
      }
      yield* Effect.fork(call(s.client, "ask"))
      yield* Deferred.await(asked).pipe(Effect.timeout("60 seconds"))
      yield* Effect.promise(() => s.client.close())
      const ended = yield* Fiber.await(s.proxy).pipe(Effect.timeoutOption("60 seconds"))
      expect(Option.isSome(ended)).toBe(true)
      // The server's own tool call was answered (its elicitation failed), so its tally exists; the
      // proxy kept it only if it verified, and never as a success of `ask`.
      for (const r of yield* s.receipts) expect((r.tally as JsonObject).st).not.toBe("ok")
      // The server exited once its input closed.
      let exited = false
      for (let i = 0; i < 40 && !exited; i++) {
        exited = s.server.pid === null || !alive(s.server.pid)
        if (!exited) yield* Effect.sleep("250 millis")
      }
      expect(exited).toBe(true)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
