// The spend chart's axes, without a browser: the vertical axis's labels are distinct for any
// maximum (rounding every tick to an integer printed "0, 1, 1" for a maximum of 1), its top is at
// or above the largest bar, and a bucket's start reads as a UTC day and time.
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { humanTime, ticks } from "../../src/console/web/charts.js"

describe("console charts", () => {
  it("y-axis ticks: distinct labels, ascending from 0, a top at or above the maximum", () => {
    fc.assert(fc.property(fc.double({ min: 1e-6, max: 1e12, noNaN: true }), (m) => {
      const t = ticks(m)
      expect(new Set(t.labels).size).toBe(t.labels.length)
      expect(t.values[0]).toBe(0)
      expect(t.max).toBeGreaterThanOrEqual(m * (1 - 1e-9))
      expect(t.values.length).toBeGreaterThanOrEqual(2)
      expect(t.values.length).toBeLessThanOrEqual(6)
      for (let i = 1; i < t.values.length; i++) expect(t.values[i]).toBeGreaterThan(t.values[i - 1])
    }), { numRuns: 500 })
    expect(ticks(1).labels).toEqual(["0.0", "0.5", "1.0"])
    expect(ticks(96.78).labels).toEqual(["0", "50", "100"])
    expect(ticks(0.3).labels).toEqual(["0.0", "0.1", "0.2", "0.3"])
    expect(ticks(0).labels).toEqual(["0", "1"])
  })

  it("bucket times read as UTC day and time", () => {
    expect(humanTime("2026-12-03T07:00:00Z")).toBe("3 Dec 07:00")
    expect(humanTime("2026-01-15T23:59:00Z")).toBe("15 Jan 23:59")
    expect(humanTime("2026-12-03T00:00:00Z", true)).toBe("3 Dec 2026")
    expect(humanTime("not a time")).toBe("not a time")
  })
})
