// The progress bar of long `mandate ledger` exports and replays: drawn on stderr,
// only when stderr is a terminal (a pipe or a file gets nothing, so output stays parseable), redrawn
// in place every `every` items and at the end, then left with a newline. No dependency: one line of
// `\r`-rewritten text. Counted in items, never in time, so it draws the same on any machine.
import { Effect } from "effect"
import { CliIo } from "./io.js"

export interface ProgressSink {
  readonly isTTY: boolean
  readonly write: (text: string) => void
}

export interface Progress {
  /** `done` items of `total` (total unknown: 0) are through. */
  readonly tick: (done: number, total: number) => Effect.Effect<void>
  /** The last redraw and the newline, when anything was drawn. */
  readonly done: Effect.Effect<void>
}

const WIDTH = 30

/** One bar: `label [#######.......]  42% 420/1000`; without a total, a count. */
export const renderBar = (label: string, done: number, total: number): string => {
  if (total <= 0) return `${label} ${done}`
  const share = Math.min(1, done / total)
  const filled = Math.round(share * WIDTH)
  return `${label} [${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${done}/${total}`
}

export const makeProgress = (label: string, sink: ProgressSink, every = 250): Progress => {
  let last: { done: number; total: number } | undefined
  let drawn = false
  const draw = (done: number, total: number) => {
    sink.write(`\r${renderBar(label, done, total)}`)
    drawn = true
  }
  return {
    tick: (done, total) =>
      Effect.sync(() => {
        if (!sink.isTTY) return
        last = { done, total }
        if (done % every === 0 || done === total) draw(done, total)
      }),
    done: Effect.sync(() => {
      if (!sink.isTTY || last === undefined) return
      draw(last.done, last.total)
      if (drawn) sink.write("\n")
    })
  }
}

/** The bar on the run's stderr. */
export const stderrProgress = (label: string): Effect.Effect<Progress> =>
  Effect.map(CliIo, (io) => makeProgress(label, { isTTY: io.stderr.isTTY === true, write: (t) => void io.stderr.write(t) }))
