// `mandate writ conformance DIR` (the other `mandate writ` commands have a module each; tree.ts
// mounts them).
import { Args, Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { formatFailure, runConformance, summary } from "../writ/conformance.js"
import { exitFailed } from "./io.js"

/** `mandate writ conformance DIR`: runs every vector file in DIR (spec section 14), prints one line
 * per failure and `N passed, N failed`; exits 1 when any failed. */
export const conformanceCommand = Command.make(
  "conformance",
  { dir: Args.directory({ name: "DIR", exists: "yes" }).pipe(Args.withDescription("The folder of conformance vectors (one JSON file per vector)")) },
  ({ dir }) =>
    Effect.gen(function* () {
      const results = yield* runConformance(dir)
      for (const r of results) if (!r.pass) yield* Console.log(formatFailure(r))
      yield* Console.log(summary(results))
      if (results.some((r) => !r.pass)) yield* exitFailed
    })
)
