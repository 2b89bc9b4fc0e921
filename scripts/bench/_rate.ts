// Operations per second of a synchronous operation, for the micro-benchmarks (verify, refusal).
import { performance } from "node:perf_hooks"

/** Operations per second of `op`, run until `ms` have passed or `limit` operations are done. */
export const rate = (ms: number, op: (i: number) => void, limit = Number.POSITIVE_INFINITY): { perSecond: number; count: number } => {
  const start = performance.now()
  let count = 0
  let now = start
  while (count < limit) {
    op(count)
    count++
    if ((count & 7) === 0) {
      now = performance.now()
      if (now - start >= ms) break
    }
  }
  now = performance.now()
  return { perSecond: (count * 1000) / (now - start), count }
}
