// The HTTP bridge client (SPEC §2.4): each request is one POST whose body is the frame; the
// response is NDJSON, EVENTs then one final reply, read line by line with the 1 MiB limit.
import { Effect, Either } from "effect"
import type { YeaConnection } from "../../yea/client.js"
import { isFinal } from "../../yea/frame.js"
import { isBlank, makeLineReader, parseFrame } from "../../yea/ndjson.js"
import { yeaError } from "../../yea/reason.js"

export interface HttpConnectOptions {
  readonly timeoutMs?: number
}

export const connectHttp = (url: URL, options: HttpConnectOptions = {}): YeaConnection => ({
  request: (frame, onEvent) =>
    Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(frame), signal })
        if (res.status !== 200 || res.body === null) throw new Error(`HTTP ${res.status}`)
        const reader = makeLineReader()
        const frames: Array<unknown> = []
        const body = res.body.getReader()
        for (let chunk = await body.read(); !chunk.done; chunk = await body.read()) {
          for (const ev of reader.push(chunk.value)) {
            if (ev._tag !== "Line" || isBlank(ev.bytes)) continue
            const parsed = parseFrame(ev.bytes)
            if (Either.isRight(parsed)) frames.push(parsed.right)
          }
        }
        return frames
      },
      catch: (e) => yeaError("unavailable", `HTTP bridge: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(
      Effect.timeoutFail({ duration: options.timeoutMs ?? 60_000, onTimeout: () => yeaError("unavailable", "no reply in time") }),
      Effect.flatMap((frames) =>
        Effect.gen(function* () {
          for (const f of frames) {
            if (!isFinal(f as { kind?: unknown })) yield* onEvent(f)
            else return f
          }
          return yield* Effect.fail(yeaError("unavailable", "the bridge sent no final reply"))
        })
      )
    ),
  close: Effect.void
})
