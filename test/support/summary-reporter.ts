// Prints one closing line in the plain form CI tools read in any language:
// "vitest: N passed, N failed, N skipped". vitest's own summary stays above it.
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  private line = ""
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
    this.line = `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`
  }
  // The default reporter prints its summary after onTestRunEnd; print ours once it has.
  onFinished(): void {
    if (this.line !== "") setImmediate(() => process.stdout.write(`\n${this.line}\n`))
  }
}
