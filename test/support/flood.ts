// Raw loopback sockets for the connection-flood tests: a flooding peer binds its sockets to
// another loopback address (the whole of 127.0.0.0/8 is loopback on Linux) than the well-formed
// client (127.0.0.1), so the server sees two peers. Every wait is bounded by a count of looks.
import { Effect, type Scope } from "effect"
import * as Net from "node:net"

export const FLOODER = "127.0.0.2"
export const CLIENT = "127.0.0.1"

export interface RawSocket {
  readonly socket: Net.Socket
  /** Everything received so far, as latin1 text. */
  readonly text: () => string
  readonly isClosed: () => boolean
}

/** One socket from `localAddress` to 127.0.0.1:`port`, once connected; destroyed with the scope. */
export const openFrom = (port: number, localAddress: string): Effect.Effect<RawSocket, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<RawSocket>((resume) => {
      let got = ""
      let closed = false
      const socket = Net.connect({ host: "127.0.0.1", port, localAddress })
      socket.on("data", (d: Buffer) => { got += d.toString("latin1") })
      socket.on("error", () => {})
      socket.on("close", () => { closed = true })
      socket.once("connect", () => resume(Effect.succeed({ socket, text: () => got, isClosed: () => closed })))
    }),
    (r) => Effect.sync(() => r.socket.destroy())
  )

/** `count` sockets from `localAddress`, opened one after another. */
export const floodFrom = (port: number, localAddress: string, count: number) =>
  Effect.forEach(Array.from({ length: count }, (_, i) => i), () => openFrom(port, localAddress))

/** Looks at `done` every `everyMs`, at most `looks` times; true once it holds. */
export const eventually = (done: () => boolean, looks = 200, everyMs = 50): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    for (let i = 0; i < looks; i++) {
      if (done()) return true
      yield* Effect.sleep(everyMs)
    }
    return done()
  })

/** Writes `chunk` every `everyMs` while the socket is open, at most `max` times; whether it was
 * closed by the server within them. */
export const trickleUntilClosed = (raw: RawSocket, chunk: string, everyMs: number, max: number): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    for (let i = 0; i < max && !raw.isClosed(); i++) {
      if (raw.socket.writable) raw.socket.write(chunk)
      yield* Effect.sleep(everyMs)
    }
    return raw.isClosed()
  })
