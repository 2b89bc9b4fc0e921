// Serving YEA over one byte stream (SPEC §2.1–§2.3): NDJSON in, replies out, multiplexed by id.
// Shared by TCP, TLS and stdio. What a peer can do to us is bounded here:
//   - a line over 1 MiB is refused (`bad_frame`) as it arrives, never held whole, and the stream
//     goes on (ndjson.ts);
//   - invalid UTF-8 or JSON refuses that one frame;
//   - at most `maxInFlight` requests run at once per connection; more are answered `limit`;
//   - a connection that sends no complete frame for `idleMs` while nothing of its own runs, or
//     that holds a partial frame for `slowMs`, is closed: blank lines and partial bytes are not
//     activity, so a trickle of them cannot hold a connection (and a server's slot) open;
//   - a peer that stops reading (our unsent replies pass `maxBufferedBytes`) is disconnected;
//   - partial frames past a small per-connection allowance draw on one pool shared by the
//     server's connections (partial-pool.ts); a connection that cannot draw is refused `limit`.
// Each request runs in a fiber owned by the connection's scope (FiberSet), so closing the
// connection interrupts its work.
import { Either, Effect, FiberSet, Scope } from "effect"
import type { Duplex, Readable, Writable } from "node:stream"
import { errorBody, envelope } from "../../yea/frame.js"
import { encodeLine, isBlank, makeLineReader, parseFrame } from "../../yea/ndjson.js"
import { yeaError } from "../../yea/reason.js"
import type { YeaServiceRuntime } from "../../yea/service/runtime.js"
import type { PartialPool } from "./partial-pool.js"

export interface StreamLimits {
  /** Requests running at once on one connection. Default 32. */
  readonly maxInFlight?: number
  /** Close a connection that sent no complete, non-blank frame for this long (ms) and has no
   * request running. Default 120000. */
  readonly idleMs?: number
  /** Close a connection holding an incomplete frame this long (ms). Default 30000. */
  readonly slowMs?: number
  /** Disconnect a peer whose unread replies exceed this (bytes). Default 8 MiB. */
  readonly maxBufferedBytes?: number
  /** The server's pool for partial frames (shared by its connections). None: only the 1 MiB
   * per-frame bound applies (one stream, as stdio). */
  readonly partialPool?: PartialPool
}

const defaults = { maxInFlight: 32, idleMs: 120_000, slowMs: 30_000, maxBufferedBytes: 8 * 1024 * 1024 }

/**
 * Serves `runtime` on one connection until it ends. `input` and `output` are the same socket for
 * TCP/TLS, stdin/stdout for stdio. Resolves when the connection is over; never fails.
 */
export const serveConnection = (
  runtime: YeaServiceRuntime,
  input: Readable,
  output: Writable,
  limits: StreamLimits = {},
  destroy: () => void = () => {
    input.destroy()
    output.destroy()
  }
): Effect.Effect<void> =>
  Effect.scoped(
    Effect.gen(function* () {
      const l = { ...defaults, ...limits }
      const run = yield* FiberSet.makeRuntime<never>()
      const reader = makeLineReader()
      const holder = {}
      let inFlight = 0
      let closed = false
      let ended = false
      // After the peer half-closes, the replies still running are sent, then our side ends too.
      const endWhenIdle = () => {
        if (ended && inFlight === 0 && !closed) output.end()
      }
      let partialSince: number | undefined
      let lastActivity = 0
      const clock = { now: 0 }
      const write = (frame: unknown) =>
        Effect.sync(() => {
          if (closed || output.writableEnded) return
          output.write(encodeLine(frame))
          // A peer that stops reading: our replies pile up in its socket buffer.
          if (output.writableLength > l.maxBufferedBytes) close()
        })
      const close = () => {
        if (closed) return
        closed = true
        destroy()
      }
      const refuse = (message: string, re = "") => run(Effect.flatMap(runtime.refuse(yeaError("bad_frame", message), re), write))
      const onLine = (bytes: Uint8Array) => {
        if (isBlank(bytes)) return
        // Only a complete frame with content is activity (§2.1: blank lines are skipped).
        lastActivity = clock.now
        const parsed = parseFrame(bytes)
        if (Either.isLeft(parsed)) return void run(Effect.flatMap(runtime.refuse(parsed.left), write))
        if (inFlight >= l.maxInFlight) {
          const id = (parsed.right as { id?: unknown }).id
          return void run(Effect.flatMap(runtime.refuse(yeaError("limit", `more than ${l.maxInFlight} requests in flight`, { retry: 1 }), typeof id === "string" ? id : ""), write))
        }
        inFlight++
        run(
          runtime.handle(parsed.right, write).pipe(
            Effect.flatMap(write),
            Effect.ensuring(Effect.sync(() => {
              inFlight--
              // Idle time counts from the last reply too, not from a request that ran long.
              lastActivity = clock.now
              endWhenIdle()
            }))
          )
        )
      }
      const done = Effect.async<void>((resume) => {
        const onData = (chunk: Buffer) => {
          if (closed) return
          for (const e of reader.push(chunk)) {
            if (e._tag === "Oversized") refuse("frame over 1 MiB")
            else onLine(e.bytes)
          }
          const held = reader.buffered()
          if (l.partialPool !== undefined && !l.partialPool.hold(holder, held)) return overPool()
          partialSince = held > 0 ? (partialSince ?? clock.now) : undefined
        }
        // The pool cannot hold this connection's partial frame: one ERROR `limit` line, then closed
        // (the frame could never be read whole; a retry may find room).
        const overPool = () => {
          input.off("data", onData)
          const line = encodeLine(envelope("s_busy", "", errorBody(yeaError("limit", "the service holds too many partial frames; send smaller frames or retry later", { retry: 1 }))))
          closed = true
          if (output.writableEnded) return destroy()
          output.end(line, () => destroy())
        }
        const finish = () => {
          closed = true
          l.partialPool?.release(holder)
          resume(Effect.void)
        }
        input.on("data", onData)
        input.once("end", () => {
          ended = true
          endWhenIdle()
        })
        input.once("close", finish)
        input.once("error", finish)
        output.once("error", finish)
        output.once("close", finish)
        return Effect.sync(() => {
          input.off("data", onData)
          l.partialPool?.release(holder)
          close()
        })
      })
      // Idle and slow peers: checked once a second against a monotonic count of ticks.
      const watchdog = Effect.gen(function* () {
        for (;;) {
          yield* Effect.sleep("1 second")
          clock.now += 1000
          if (closed) return
          if (clock.now - lastActivity >= l.idleMs && inFlight === 0) close()
          else if (partialSince !== undefined && clock.now - partialSince >= l.slowMs) close()
        }
      })
      yield* Effect.raceFirst(done, watchdog)
      yield* Effect.yieldNow()
    })
  ).pipe(Effect.withSpan("yea.stream.connection"))

/** Serves a duplex socket (TCP, TLS). */
export const serveSocket = (runtime: YeaServiceRuntime, socket: Duplex, limits?: StreamLimits): Effect.Effect<void> =>
  serveConnection(runtime, socket, socket, limits, () => socket.destroy())

export type { Scope }
