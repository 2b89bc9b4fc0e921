// NDJSON framing (SPEC §2.1, §2.3): frames are newline-terminated, at most 1 MiB each.
//
// A reader is fed the stream's chunks as they arrive and hands back complete lines. A line that
// grows past the limit is refused as soon as it does: its bytes are dropped as they come (never
// buffered whole, §2.1) until its newline, and then the stream goes on, so the connection stays
// usable after the refusal. Decoding text is separate: invalid UTF-8 refuses that one frame.
import { Either } from "effect"
import { parseJson, type Json } from "../kernel/json.js"
import { MAX_FRAME_BYTES, MAX_FRAME_DEPTH } from "./frame.js"
import { yeaError, type YeaError } from "./reason.js"

export type LineEvent =
  | { readonly _tag: "Line"; readonly bytes: Uint8Array }
  /** A line passed the limit; its remaining bytes are being skipped. Reported once per line. */
  | { readonly _tag: "Oversized" }

export interface LineReader {
  /** Feeds a chunk; returns the events it completes, in order. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<LineEvent>
  /** Bytes held for an incomplete line (never more than the limit). */
  readonly buffered: () => number
}

const NL = 0x0a

/** A reader for lines of at most `maxBytes` (the newline not counted). */
export const makeLineReader = (maxBytes: number = MAX_FRAME_BYTES): LineReader => {
  let parts: Array<Uint8Array> = []
  let size = 0
  let skipping = false
  const take = (): Uint8Array => {
    const out = parts.length === 1 ? parts[0] : concat(parts, size)
    parts = []
    size = 0
    return out
  }
  const push = (chunk: Uint8Array): ReadonlyArray<LineEvent> => {
    const events: Array<LineEvent> = []
    let start = 0
    while (start <= chunk.length) {
      const nl = chunk.indexOf(NL, start)
      const end = nl === -1 ? chunk.length : nl
      if (skipping) {
        if (nl === -1) break
        skipping = false
      } else {
        const piece = chunk.subarray(start, end)
        if (size + piece.length > maxBytes) {
          // Refused now: what was held is dropped, and the rest of the line will be skipped.
          parts = []
          size = 0
          events.push({ _tag: "Oversized" })
          if (nl === -1) {
            skipping = true
            break
          }
        } else if (nl === -1) {
          // Copy: the transport may reuse its chunk buffer.
          if (piece.length > 0) {
            parts.push(piece.slice())
            size += piece.length
          }
          break
        } else {
          if (piece.length > 0) {
            parts.push(piece)
            size += piece.length
          }
          events.push({ _tag: "Line", bytes: take().slice() })
        }
      }
      start = end + 1
    }
    return events
  }
  return { push, buffered: () => size }
}

const concat = (parts: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const out = new Uint8Array(size)
  let off = 0
  for (const p of parts) {
    out.set(p, off)
    off += p.length
  }
  return out
}

/** A line holding only whitespace (e.g. `\r` of a CRLF peer or a keep-alive) carries no frame. */
export const isBlank = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)

/**
 * One frame's JSON from its line: strict UTF-8, strict JSON (duplicate members refused), bounded
 * depth. Any failure is `bad_frame` (§7).
 */
export const parseFrame = (bytes: Uint8Array): Either.Either<Json, YeaError> =>
  Either.mapLeft(parseJson(bytes, { integersOnly: false, maxDepth: MAX_FRAME_DEPTH }), (e) =>
    yeaError("bad_frame", e.reason === "too_large" ? `frame nests deeper than ${MAX_FRAME_DEPTH}` : `not a JSON frame: ${e.message}`)
  )

const encoder = new TextEncoder()

/**
 * A frame as one NDJSON line. JSON.stringify escapes every newline inside strings, so the only
 * newline is the terminator (§2.3).
 */
export const encodeLine = (frame: unknown): Uint8Array => encoder.encode(JSON.stringify(frame) + "\n")
