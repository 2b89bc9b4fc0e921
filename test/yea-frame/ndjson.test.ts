// NDJSON framing (SPEC §2.1, §2.3): the 1 MiB limit refuses an oversized line without holding it
// whole, a frame split across reads is reassembled, and the stream stays usable after a refusal.
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { encodeLine, isBlank, makeLineReader, parseFrame } from "../../src/yea/ndjson.js"
import { MAX_FRAME_BYTES } from "../../src/yea/frame.js"

const enc = new TextEncoder()
const text = (e: { _tag: string; bytes?: Uint8Array }) => (e._tag === "Line" ? new TextDecoder().decode(e.bytes) : e._tag)

describe("line reader", () => {
  it("reassembles a frame split across reads, byte by byte", () => {
    const r = makeLineReader(64)
    const bytes = enc.encode('{"a":1}\n{"b":2}\n')
    const out = [...bytes].flatMap((b) => r.push(Uint8Array.of(b)).map(text))
    expect(out).toEqual(['{"a":1}', '{"b":2}'])
  })
  it("refuses an oversized line once, never holding more than the limit, then reads the next frame", () => {
    const limit = 1000
    const r = makeLineReader(limit)
    const events: Array<string> = []
    let maxHeld = 0
    for (let i = 0; i < 50; i++) {
      events.push(...r.push(new Uint8Array(100).fill(0x61)).map(text))
      maxHeld = Math.max(maxHeld, r.buffered())
    }
    events.push(...r.push(enc.encode('aaa\n{"ok":true}\n')).map(text))
    expect(maxHeld).toBeLessThanOrEqual(limit)
    expect(events).toEqual(["Oversized", '{"ok":true}'])
  })
  it("accepts a line of exactly the limit and refuses one byte more", () => {
    const r = makeLineReader(MAX_FRAME_BYTES)
    const exact = new Uint8Array(MAX_FRAME_BYTES + 1).fill(0x20)
    exact[MAX_FRAME_BYTES] = 0x0a
    expect(r.push(exact).map((e) => e._tag)).toEqual(["Line"])
    const over = new Uint8Array(MAX_FRAME_BYTES + 2).fill(0x20)
    over[MAX_FRAME_BYTES + 1] = 0x0a
    expect(r.push(over).map((e) => e._tag)).toEqual(["Oversized"])
    expect(r.push(enc.encode("{}\n")).map(text)).toEqual(["{}"])
  })
  it("does not keep a slice of a reused chunk buffer", () => {
    const r = makeLineReader(64)
    const chunk = enc.encode('{"a":')
    r.push(chunk)
    chunk.fill(0x7a)
    expect(r.push(enc.encode("1}\n")).map(text)).toEqual(['{"a":1}'])
  })
})

describe("frame parsing", () => {
  const code = (b: Uint8Array) => Either.match(parseFrame(b), { onLeft: (e) => e.reason, onRight: () => "ok" })
  it("refuses invalid UTF-8, duplicate members and deep nesting with bad_frame", () => {
    expect(code(Uint8Array.of(0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d))).toBe("bad_frame")
    expect(code(enc.encode('{"a":1,"a":2}'))).toBe("bad_frame")
    expect(code(enc.encode("[".repeat(100) + "]".repeat(100)))).toBe("bad_frame")
    expect(code(enc.encode('{"a":1.5}'))).toBe("ok")
  })
  it("encodes a frame as one line whatever its strings hold", () => {
    const line = new TextDecoder().decode(encodeLine({ s: "a\nb\u2028c" }))
    expect(line.indexOf("\n")).toBe(line.length - 1)
    expect(isBlank(enc.encode("\r"))).toBe(true)
  })
})
