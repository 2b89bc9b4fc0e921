// The client end of a YEA byte stream (SPEC §2.2, §2.3): requests are written as NDJSON lines and
// replies routed back by `re`, so any number of requests share one connection. EVENTs go to their
// request's callback; the first final reply completes it. A reply for no pending request is
// dropped; an oversized or unreadable reply line is dropped too (its request then times out or
// fails when the connection closes, `unavailable`).
//
// The stream's callbacks run their effects on a runtime owned by the connection's scope
// (`FiberSet.makeRuntime`), so an EVENT callback runs with the caller's services and FiberRefs
// (logger, tracer) and stops when the scope closes, instead of on the default runtime.
import { Effect, Either, FiberSet, Option, type Scope } from "effect"
import type { Readable, Writable } from "node:stream"
import * as Correlator from "../../kernel/correlator.js"
import type { YeaConnection } from "../../yea/client.js"
import { isFinal } from "../../yea/frame.js"
import { encodeLine, isBlank, makeLineReader, parseFrame } from "../../yea/ndjson.js"
import { yeaError, type YeaError } from "../../yea/reason.js"

type OnEvent = (event: unknown) => Effect.Effect<void>

export interface StreamClientOptions {
  /** How long one request may wait for its final reply (ms). Default 60000. */
  readonly timeoutMs?: number
}

/** What to do with one reply frame read from the stream. */
const route = (requests: Correlator.Correlator<string, unknown, YeaError, OnEvent>, frame: Record<string, unknown>): Effect.Effect<void> =>
  Effect.gen(function*() {
    const re = frame.re
    // A refusal before any request was read (connection cap, SPEC §2.3): it answers the one
    // request waiting; with several waiting it cannot say which, so the close fails them all.
    if (re === "" && frame.kind === "ERROR" && typeof frame.code === "string") {
      const all = yield* requests.entries
      if (all.length === 1) yield* requests.complete(all[0][0], frame)
      return
    }
    if (typeof re !== "string") return
    if (isFinal(frame)) {
      yield* requests.complete(re, frame)
      return
    }
    const onEvent = yield* requests.pending(re)
    if (Option.isSome(onEvent)) yield* onEvent.value(frame)
  })

/**
 * A YeaConnection over `input`/`output` (one socket, or a child's stdout/stdin). Its callbacks
 * run in fibers of the scope; closing the scope fails every request still waiting.
 */
export const streamConnection = (
  input: Readable,
  output: Writable,
  close: () => void,
  options: StreamClientOptions = {}
): Effect.Effect<YeaConnection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntime<never>()
    const requests = Correlator.make<string, unknown, YeaError, OnEvent>()
    const fail = (e: YeaError) => void run(requests.close(e))
    // Runs before the FiberSet is closed (finalizers run in reverse), so a request still waiting
    // when the scope ends fails `unavailable` rather than waiting out its timeout.
    yield* Effect.addFinalizer(() => requests.close(yeaError("unavailable", "the connection closed")))
    const reader = makeLineReader()
    input.on("data", (chunk: Buffer) => {
      for (const ev of reader.push(chunk)) {
        if (ev._tag !== "Line" || isBlank(ev.bytes)) continue
        const parsed = parseFrame(ev.bytes)
        if (Either.isLeft(parsed)) continue
        run(route(requests, parsed.right as Record<string, unknown>))
      }
    })
    input.once("close", () => fail(yeaError("unavailable", "the connection closed")))
    input.once("error", (e) => fail(yeaError("unavailable", `connection error: ${e.message}`)))
    output.on("error", (e) => fail(yeaError("unavailable", `connection error: ${e.message}`)))
    return {
      request: (frame, onEvent) =>
        requests.call(frame.id as string, onEvent, Effect.sync(() => void output.write(encodeLine(frame)))).pipe(
          Effect.timeoutFail({ duration: options.timeoutMs ?? 60_000, onTimeout: () => yeaError("unavailable", "no reply in time") })
        ),
      close: Effect.sync(close)
    } satisfies YeaConnection
  })
