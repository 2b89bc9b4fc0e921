// The order test files start in, within each project: the longest first, so that the last file
// of a project does not run alone on one core while the other waits (a 135 s file started last
// made the integration project 100 s longer than its work needed on two workers). vitest orders by
// the durations its cache kept from the previous run; a fresh clone has no cache, and vitest then
// starts the largest files first, which are not the slow ones (the slow ones spawn processes and
// are short). So a file whose duration the cache does not know takes the figure below, measured in
// full runs (seconds on the 2-core machine, rounded); one neither knows comes after, largest first.
// A failed file in the cache still comes first, as with vitest's own order.
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const MEASURED: Readonly<Record<string, number>> = {
  "test/ledger/concurrency.test.ts": 191,
  "test/docs/blocks.e2e.test.ts": 191,
  "test/bind-writ-http/crash.test.ts": 109,
  "test/console/console.browser.test.ts": 77,
  "test/store-pg-writ/kill.test.ts": 70,
  "test/package/install.test.ts": 62,
  "test/writ-executor/kill.test.ts": 58,
  "test/package/e2e.test.ts": 40
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const base = await super.sort(files)
    const root = this.ctx.config.root
    const weight = (f: TestSpecification): number | undefined => {
      const path = relative(root, f.moduleId)
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${path}`)
      if (cached !== undefined) return cached.failed ? Number.POSITIVE_INFINITY : cached.duration
      const measured = MEASURED[path]
      return measured === undefined ? undefined : measured * 1000
    }
    const weighed = base.map((f, i) => ({ f, i, w: weight(f) }))
    return weighed
      .sort((a, b) =>
        a.w !== undefined && b.w !== undefined ? (b.w - a.w) || a.i - b.i : a.w !== undefined ? -1 : b.w !== undefined ? 1 : a.i - b.i
      )
      .map((x) => x.f)
  }
}
