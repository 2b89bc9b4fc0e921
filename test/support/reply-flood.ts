// An upstream's reply far larger than any cap, for the tests of bounded reads (the gate's and the
// OpenAPI adapter's): a JSON array of spaces streamed chunk by chunk with backpressure, counting
// what it managed to write, and stopping as soon as the reader goes away.
import type { ServerResponse } from "node:http"

export const FLOOD_CHUNK = 64 * 1024
export const FLOOD_TOTAL = 128 * 1024 * 1024

/** What one flood wrote, and when it ended (all written, or the reader gone). */
export interface FloodCount {
  written: number
  readonly done: Promise<void>
}

/** A counter and the pump that fills it: `pump(res)` streams FLOOD_TOTAL bytes to `res` (its status
 * and headers already set, or the default 200). */
export const replyFlood = (): { readonly count: FloodCount; readonly pump: (res: ServerResponse) => Promise<void> } => {
  let finished = () => {}
  const count: FloodCount = { written: 0, done: new Promise<void>((r) => { finished = r }) }
  const pump = async (res: ServerResponse) => {
    let closed = false
    const gone = new Promise((r) => res.once("close", () => { closed = true; r(undefined) }))
    const chunk = Buffer.alloc(FLOOD_CHUNK, 0x20)
    res.write("[")
    while (!closed && count.written < FLOOD_TOTAL) {
      count.written += FLOOD_CHUNK
      if (!res.write(chunk)) await Promise.race([new Promise((r) => res.once("drain", r)), gone])
    }
    res.end("]")
    finished()
  }
  return { count, pump }
}
