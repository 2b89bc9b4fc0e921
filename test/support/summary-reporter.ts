// Prints, after vitest's own summary, the ten slowest test files (so a file that grows slow shows
// in every run) and then one closing line in the plain form CI tools read in any language:
// "vitest: N passed, N failed, N skipped". That line is always the last one printed.
import { relative } from "node:path"
import type { Reporter, TestModule } from "vitest/node"

/** A file's own time: importing it and running its tests and hooks (not waiting for a worker). */
const fileTime = (m: TestModule): number => {
  const d = m.diagnostic()
  return d.collectDuration + d.setupDuration + d.prepareDuration + d.environmentSetupDuration + d.duration
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`.padStart(8)

export default class SummaryReporter implements Reporter {
  private text = ""
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const s = t.result().state
        if (s === "passed") passed++
        else if (s === "failed") failed++
        else skipped++
      }
      // A file that failed to load has no tests but is still a failure.
      if (m.state() === "failed" && [...m.children.allTests()].length === 0) failed++
    }
    const slowest = [...testModules].sort((a, b) => fileTime(b) - fileTime(a)).slice(0, 10)
    const lines = slowest.map((m) => `${seconds(fileTime(m))}  ${relative(m.project.config.root, m.moduleId)} (${m.project.name})`)
    this.text = [
      ...(lines.length === 0 ? [] : ["", "slowest test files:", ...lines]),
      "",
      `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`
    ].join("\n")
  }
  // The default reporter prints its summary after onTestRunEnd; print ours once it has.
  onFinished(): void {
    if (this.text !== "") setImmediate(() => process.stdout.write(`${this.text}\n`))
  }
}
