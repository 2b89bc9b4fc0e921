// The demo's record: every line it prints is kept for out/transcript.txt, every object exchanged
// is written to out/ under a numbered name, and every expectation is checked and counted, so the
// demo can exit non-zero when one fails.
import { FileSystem } from "@effect/platform"
import { Console, Effect } from "effect"
import type { Json } from "../../kernel/json.js"
import { type CliError, writeJson } from "../writ-io.js"

export class Transcript {
  readonly lines: Array<string> = []
  readonly failures: Array<string> = []
  checks = 0
  private files = 0
  constructor(readonly out: string) {}

  log(line = ""): Effect.Effect<void> {
    return Effect.zipRight(Effect.sync(() => this.lines.push(line)), Console.log(line))
  }

  step(title: string): Effect.Effect<void> {
    return Effect.zipRight(this.log(""), this.log(`== ${title}`))
  }

  /** Checks one expectation and records the result. */
  expect(label: string, ok: boolean, detail = ""): Effect.Effect<boolean> {
    return Effect.gen(this, function*() {
      this.checks++
      if (!ok) this.failures.push(`${label}${detail ? `: ${detail}` : ""}`)
      yield* this.log(`  ${ok ? "PASS" : "FAIL"} ${label}${detail ? ` (${detail})` : ""}`)
      return ok
    })
  }

  /** Writes an object exchanged to out/NN-name.json and names the file in the transcript. */
  save(name: string, value: Json): Effect.Effect<string, CliError, FileSystem.FileSystem> {
    return Effect.gen(this, function*() {
      const file = `${String(++this.files).padStart(2, "0")}-${name}.json`
      yield* writeJson(`${this.out}/${file}`, value)
      yield* this.log(`     -> out/${file}`)
      return file
    })
  }

  finish(): Effect.Effect<void, never, FileSystem.FileSystem> {
    return Effect.flatMap(FileSystem.FileSystem, (fs) =>
      fs.writeFileString(`${this.out}/transcript.txt`, this.lines.join("\n") + "\n")
    ).pipe(Effect.ignore)
  }
}
