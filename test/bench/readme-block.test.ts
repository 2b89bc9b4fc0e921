// The benchmark block of docs/benchmarks.md is written from one run's output (scripts/bench-readme.ts): every
// benchmark's summary lines, its time and the machine line, and nothing from any other run.
import { describe, expect, it } from "@effect/vitest"
import { block, parseRun } from "../../scripts/bench-readme.js"

const log = [
  "machine: 2 x Test CPU, 24 GiB, node v20.0.0, linux; load average 1.00 2.00 3.00; started 2026-12-02T00:00:00.000Z",
  "== bench verify",
  "chain  fresh ...",
  "verify: fresh d1 0.90 d2 0.91 d4 0.92 d8 0.93; reused d1 0.99 d2 0.99 d4 0.99 d8 0.99",
  "-- bench verify: 12 s; load average 1.50 2.00 3.00",
  "== bench executor",
  "  executor-workers: w1 100/s w2 150/s w4 160/s (postgres)",
  "executor: count 0.51 total 0.52 replay 0.60 (durable)",
  "verify: not this bench's line",
  "-- bench executor: 30 s; load average 1.70 2.00 3.00",
  "== bench executor --store postgres://u@h:5432/db#s --workers 4",
  "executor-workers: w1 30/s w2 40/s w4 35/s (postgres)",
  "-- bench executor --store postgres://u@h:5432/db#s --workers 4: 40 s; load average 1.75 2.00 3.00",
  "== bench broken",
  "broken: FAILED (no service)",
  "-- bench broken: 0 s; load average 1.80 2.00 3.00",
  "== bench quiet",
  "nothing named",
  "-- bench quiet: 1 s; load average 1.90 2.00 3.00"
].join("\n")

describe("bench:readme", () => {
  it("keeps each benchmark's own summary lines, in order, and its time", () => {
    const run = parseRun(log)
    expect(run.machine).toMatch(/^2 x Test CPU/)
    expect(run.endLoad).toBe("1.90 2.00 3.00")
    expect(run.sections.map((s) => [s.name, s.seconds, s.summaries])).toEqual([
      ["verify", "12", ["verify: fresh d1 0.90 d2 0.91 d4 0.92 d8 0.93; reused d1 0.99 d2 0.99 d4 0.99 d8 0.99"]],
      ["executor", "30", ["executor-workers: w1 100/s w2 150/s w4 160/s (postgres)", "executor: count 0.51 total 0.52 replay 0.60 (durable)"]],
      ["executor --store postgres://u@h:5432/db#s --workers 4", "40", ["executor-workers: w1 30/s w2 40/s w4 35/s (postgres)"]],
      ["broken", "0", ["broken: FAILED (no service)"]],
      ["quiet", "1", []]
    ])
  })

  it("writes one table between the markers, naming the machine and a benchmark without a summary", () => {
    const b = block(log)
    expect(b.startsWith("<!-- bench:begin -->\n")).toBe(true)
    expect(b.endsWith("\n<!-- bench:end -->")).toBe(true)
    expect(b).toContain("on: 2 x Test CPU, 24 GiB")
    expect(b).toContain("| `broken` | 0 s | `broken: FAILED (no service)` |")
    expect(b).toContain("| `quiet` | 1 s | (no summary line) |")
    expect(b).not.toContain("not this bench's line")
    // The page lives in docs/: its link to the whole output goes up one folder.
    expect(b).toContain("](../scripts/bench/results/last-run.txt)")
  })
})
