// A raw loopback peer for the transport tests: write any bytes, read reply lines, see the close.
import * as net from "node:net"
import type { Duplex } from "node:stream"

export interface RawPeer {
  readonly socket: Duplex
  readonly write: (b: string | Uint8Array) => void
  /** Resolves with the next reply line parsed as JSON (bounded wait: rejects after `ms`). */
  readonly next: (ms?: number) => Promise<Record<string, unknown>>
  /** Resolves when the server closed the connection (rejects after `ms`). */
  readonly closed: (ms?: number) => Promise<void>
  /** Reply lines received so far (read or not). */
  readonly received: () => number
}

export const rawPeer = (socket: Duplex): RawPeer => {
  const lines: Array<string> = []
  const waiters: Array<() => void> = []
  let buf = ""
  let isClosed = false
  let count = 0
  socket.on("data", (d: Buffer) => {
    buf += d.toString("utf8")
    let i
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, i))
      count++
      buf = buf.slice(i + 1)
    }
    waiters.splice(0).forEach((w) => w())
  })
  socket.on("error", () => undefined)
  socket.on("close", () => {
    isClosed = true
    waiters.splice(0).forEach((w) => w())
  })
  const wait = <A>(ready: () => A | undefined, ms: number, what: string) =>
    new Promise<A>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)
      const check = () => {
        const v = ready()
        if (v !== undefined) {
          clearTimeout(timer)
          resolve(v)
        } else waiters.push(check)
      }
      check()
    })
  return {
    socket,
    write: (b) => void socket.write(b),
    next: (ms = 10_000) => wait(() => (lines.length > 0 ? (JSON.parse(lines.shift()!) as Record<string, unknown>) : undefined), ms, "reply"),
    received: () => count,
    closed: (ms = 10_000) => wait(() => (isClosed ? (true as const) : undefined), ms, "close").then(() => undefined)
  }
}

export const rawTcp = (port: number): Promise<RawPeer> =>
  new Promise((resolve, reject) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => resolve(rawPeer(s)))
    s.once("error", reject)
  })
