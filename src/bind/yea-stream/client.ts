// The client end of a YEA byte stream (SPEC §2.2, §2.3): requests are written as NDJSON lines and
// replies routed back by `re`, so any number of requests share one connection. EVENTs go to their
// request's callback; the first final reply completes it. A reply for no pending request is
// dropped; an oversized or unreadable reply line is dropped too (its request then times out or
// fails when the connection closes, `unavailable`).
import { Deferred, Effect, Either } from "effect"
import type { Readable, Writable } from "node:stream"
import type { YeaConnection } from "../../yea/client.js"
import { isFinal } from "../../yea/frame.js"
import { encodeLine, isBlank, makeLineReader, parseFrame } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"

interface Pending {
  readonly done: Deferred.Deferred<unknown, YeaError>
  readonly onEvent: (event: unknown) => Effect.Effect<void>
}

export interface StreamClientOptions {
  /** How long one request may wait for its final reply (ms). Default 60000. */
  readonly timeoutMs?: number
}

/** A YeaConnection over `input`/`output` (one socket, or a child's stdout/stdin). */
export const streamConnection = (input: Readable, output: Writable, close: () => void, options: StreamClientOptions = {}): YeaConnection => {
  const pending = new Map<string, Pending>()
  const reader = makeLineReader()
  let failure: YeaError | undefined
  const failAll = (e: YeaError) => {
    failure ??= e
    for (const p of pending.values()) Effect.runFork(Deferred.fail(p.done, e))
    pending.clear()
  }
  input.on("data", (chunk: Buffer) => {
    for (const ev of reader.push(chunk)) {
      if (ev._tag !== "Line" || isBlank(ev.bytes)) continue
      const parsed = parseFrame(ev.bytes)
      if (Either.isLeft(parsed)) continue
      const frame = parsed.right as Record<string, unknown>
      const re = frame.re
      // A refusal before any request was read (connection cap): fail everything with its reason.
      if (re === "" && frame.kind === "ERROR" && pending.size > 0 && typeof frame.code === "string") {
        const only = pending.size === 1 ? [...pending.values()][0] : undefined
        if (only !== undefined) {
          pending.clear()
          Effect.runFork(Deferred.succeed(only.done, frame))
        }
        continue
      }
      if (typeof re !== "string") continue
      const p = pending.get(re)
      if (p === undefined) continue
      if (isFinal(frame)) {
        pending.delete(re)
        Effect.runFork(Deferred.succeed(p.done, frame))
      } else Effect.runFork(p.onEvent(frame))
    }
  })
  input.once("close", () => failAll(yeaError("unavailable", "the connection closed")))
  input.once("error", (e) => failAll(yeaError("unavailable", `connection error: ${e.message}`)))
  output.on("error", (e) => failAll(yeaError("unavailable", `connection error: ${e.message}`)))
  return {
    request: (frame, onEvent) =>
      Effect.gen(function* () {
        if (failure !== undefined) return yield* Effect.fail(failure)
        const id = frame.id as string
        const done = yield* Deferred.make<unknown, YeaError>()
        pending.set(id, { done, onEvent })
        output.write(encodeLine(frame))
        return yield* Deferred.await(done).pipe(
          Effect.timeoutFail({ duration: options.timeoutMs ?? 60_000, onTimeout: () => yeaError("unavailable", "no reply in time") }),
          Effect.ensuring(Effect.sync(() => void pending.delete(id)))
        )
      }),
    close: Effect.sync(close)
  }
}
