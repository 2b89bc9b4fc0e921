// A ledger file is read a line at a time with each line bounded while it is read (chain.ts
// boundedLines): a file of one enormous line is refused `line_too_long` without being held whole,
// and the CLI's `record` and `verify` of files refuse it with that code.
import { it as eit } from "@effect/vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Chunk, Effect, Either, Option, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { boundedLines, MAX_LINE_BYTES } from "../../src/ledger/index.js"
import { runCli } from "../support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "mandate-bounded-lines-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A source of `total` bytes of `a` (no newline), in chunks of `size`, one chunk per pull, counting what was pulled. */
const counting = (total: number, size: number) => {
  const seen = { pulled: 0 }
  const chunk = new Uint8Array(size).fill(0x61)
  const stream = Stream.repeatEffectOption(Effect.suspend(() => {
    if (seen.pulled >= total) return Effect.fail(Option.none())
    seen.pulled += size
    return Effect.succeed(chunk)
  }))
  return { seen, stream }
}

describe("boundedLines", () => {
  eit.effect("refuses a 20 MB line line_too_long having pulled no more than the bound and one chunk", () =>
    Effect.gen(function*() {
      const size = 64 * 1024
      const { seen, stream } = counting(20 * 1024 * 1024, size)
      const r = yield* Effect.either(Stream.runCollect(boundedLines(stream)))
      expect(Either.isLeft(r) && r.left._tag === "LedgerError" ? r.left.reason : r).toBe("line_too_long")
      expect(seen.pulled).toBeLessThanOrEqual(MAX_LINE_BYTES + size)
    }))

  eit.effect("refuses at a smaller bound, naming the line", () =>
    Effect.gen(function*() {
      const enc = new TextEncoder()
      const src = Stream.make(enc.encode("ab\ncd"), enc.encode("efgh\nij"))
      const r = yield* Effect.either(Stream.runCollect(boundedLines(src, 4)))
      expect(Either.isLeft(r) ? [r.left.reason, r.left.path] : r).toEqual(["line_too_long", "line 2"])
    }))

  eit.effect("splits lines across chunks, CRLF and a last line without a newline, multi-byte characters whole", () =>
    Effect.gen(function*() {
      const bytes = new TextEncoder().encode("a€b\r\n\nxy\u00e9z\nlast")
      // One byte per chunk: every character, the euro sign's three bytes too, crosses a chunk boundary.
      const src = Stream.fromIterable(Array.from(bytes, (b) => Uint8Array.of(b)))
      const lines = yield* Stream.runCollect(boundedLines(src, 8))
      expect(Chunk.toReadonlyArray(lines)).toEqual(["a€b", "", "xy\u00e9z", "last"])
    }))
})

describe("mandate ledger record and verify of a file with one enormous line", () => {
  it("are refused line_too_long", async () => {
    const big = join(dir, "big.jsonl")
    writeFileSync(big, `{"type":"observation","x":"${"a".repeat(20 * 1024 * 1024)}"}\n`)
    const db = join(dir, "l.db")
    expect((await runCli(["ledger", "init", db])).status).toBe(0)
    for (const args of [["record", db, big], ["verify", big]]) {
      const r = await runCli(["ledger", ...args])
      expect(r.status, r.stderr).toBe(1)
      expect(r.stderr).toMatch(/^error: line_too_long at line 1: /)
    }
  })
})
