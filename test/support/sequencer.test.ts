// The suite's file order (sequencer.ts): the longest files first, by the cache's durations where it
// has them and by the measured figures where it has not (a fresh clone), a failed file first of all.
import { describe, expect, it } from "vitest"
import type { TestSpecification } from "vitest/node"
import LongestFirst from "./sequencer.js"

const root = "/repo"

interface Cached { readonly duration: number; readonly failed: boolean }

/** A sequencer over a stand-in of vitest's context: a results cache and file sizes. */
const order = async (
  files: ReadonlyArray<string>,
  cached: Readonly<Record<string, Cached>> = {},
  sizes: Readonly<Record<string, number>> = {}
): Promise<Array<string>> => {
  const ctx = {
    config: { root },
    cache: {
      getFileTestResults: (key: string) => cached[key],
      getFileStats: (key: string) => (sizes[key] === undefined ? undefined : { size: sizes[key] })
    }
  }
  const specs = files.map((f) => ({ moduleId: `${root}/${f}`, project: { name: "integration" } }) as unknown as TestSpecification)
  const sorted = await new LongestFirst(ctx as never).sort(specs)
  return sorted.map((s) => s.moduleId.slice(root.length + 1))
}

describe("the order test files start in", () => {
  it("with no cache (a fresh clone), the files measured slow come first, longest first, then the others by size", async () => {
    const files = ["test/a.test.ts", "test/writ-executor/kill.test.ts", "test/b.test.ts", "test/ledger/concurrency.test.ts"]
    const sizes = { "integration:test/a.test.ts": 10, "integration:test/b.test.ts": 20 }
    expect(await order(files, {}, sizes)).toEqual([
      "test/ledger/concurrency.test.ts",
      "test/writ-executor/kill.test.ts",
      "test/b.test.ts",
      "test/a.test.ts"
    ])
  })

  it("the cache's durations outrank the measured figures, and a file that failed last time comes first", async () => {
    const files = ["test/ledger/concurrency.test.ts", "test/a.test.ts", "test/b.test.ts"]
    const cached = {
      "integration:test/ledger/concurrency.test.ts": { duration: 20_000, failed: false },
      "integration:test/a.test.ts": { duration: 90_000, failed: false },
      "integration:test/b.test.ts": { duration: 1_000, failed: true }
    }
    expect(await order(files, cached)).toEqual(["test/b.test.ts", "test/a.test.ts", "test/ledger/concurrency.test.ts"])
  })
})
