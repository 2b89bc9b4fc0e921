// What a PostgreSQL client sends, counted on its socket: a test (or a diagnosis) opens the store
// with `stream: counter.stream` (PgStoreOptions) and reads how many round trips a step took. A
// round trip is one message the client then waits on: a Sync (the end of an extended-protocol
// statement: Parse, Bind, Describe, Execute, Sync) or a simple Query. The statements' text is
// kept too (from Parse and Query messages), in order.
import { Socket } from "node:net"
import type { Duplex } from "node:stream"

export interface StatementCounter {
  /** For PgStoreOptions.stream: a TCP socket whose writes are counted. */
  readonly stream: () => Duplex
  /** Round trips sent since the counter was made (or last reset). */
  readonly roundTrips: () => number
  /** The text of every statement parsed or queried since then, in order. */
  readonly statements: () => ReadonlyArray<string>
  readonly reset: () => void
}

const SYNC = 0x53
const QUERY = 0x51
const PARSE = 0x50

/** The NUL-terminated string at `at` of `b`. */
const cString = (b: Buffer, at: number) => {
  const end = b.indexOf(0, at)
  return b.toString("utf8", at, end < 0 ? b.length : end)
}

export const statementCounter = (): StatementCounter => {
  let trips = 0
  let texts: Array<string> = []
  // Counts every complete frontend message in one write (node-postgres writes whole messages).
  const watch = (chunk: unknown) => {
    if (!Buffer.isBuffer(chunk)) return
    let at = 0
    while (at + 5 <= chunk.length) {
      const type = chunk[at]
      const length = chunk.readUInt32BE(at + 1)
      if (type === SYNC && length === 4) trips++
      else if (type === QUERY) {
        trips++
        texts.push(cString(chunk, at + 5))
      } else if (type === PARSE) {
        // Parse: the statement's name, then its text.
        const name = cString(chunk, at + 5)
        texts.push(cString(chunk, at + 5 + Buffer.byteLength(name) + 1))
      }
      at += 1 + length
    }
  }
  return {
    stream: () => {
      // Below `write`, where every chunk of the socket passes (alone, or corked together).
      const socket = new Socket() as Socket & {
        _write: (chunk: unknown, encoding: unknown, cb: unknown) => void
        _writev: (chunks: ReadonlyArray<{ chunk: unknown }>, cb: unknown) => void
      }
      const one = socket._write.bind(socket)
      const many = socket._writev.bind(socket)
      socket._write = (chunk, encoding, cb) => {
        watch(chunk)
        one(chunk, encoding, cb)
      }
      socket._writev = (chunks, cb) => {
        for (const c of chunks) watch(c.chunk)
        many(chunks, cb)
      }
      return socket
    },
    roundTrips: () => trips,
    statements: () => texts,
    reset: () => {
      trips = 0
      texts = []
    }
  }
}
