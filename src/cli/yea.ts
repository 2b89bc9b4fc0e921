// `mandate yea conformance DIR`: the YEA conformance runner (tree.ts mounts it under `mandate yea`).
import { Args, Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { runConformance, summarize } from "../yea/conformance.js"
import { exitFailed } from "./io.js"

const dir = Args.directory({ name: "DIR", exists: "yes" }).pipe(
  Args.withDescription("a folder holding YEA conformance files (canonical.json, grants.json, ...)")
)

/**
 * `mandate yea conformance DIR`: runs every known conformance file present in DIR, prints one line
 * per failed case (`file: case: why`), a line per skipped file, then `N passed, N failed` counting
 * cases. Exits 1 on any failure.
 */
export const yeaConformanceCommand = Command.make("conformance", { dir }, ({ dir }) =>
  Effect.gen(function* () {
    const summary = summarize(yield* runConformance(dir))
    for (const line of summary.failures) yield* Console.log(line)
    for (const line of summary.skipped) yield* Console.log(line)
    yield* Console.log(`${summary.passed} passed, ${summary.failed} failed`)
    if (summary.failed > 0) {
      yield* exitFailed
    }
  })
)
