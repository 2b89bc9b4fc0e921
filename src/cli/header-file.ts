// `--header-file FILE`: the HTTP headers an adapter sends upstream on every call, one `Name: value`
// a line, kept in a file rather than on the command line because they are usually credentials
// (`Authorization: Bearer ...`), and a command line is visible to every user of the machine. So the
// file is held to what a key file is (writ-io.ts readKeyFile): readable by its owner only.
// Blank lines and lines starting with `#` are skipped.
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { type CliError, cliError, readBytes, systemWhy } from "./writ-io.js"

/** One `Name: value` header (`--header` or a line of a header file), or undefined when it is not one. */
export const parseHeader = (line: string): readonly [string, string] | undefined => {
  const i = line.indexOf(":")
  const name = line.slice(0, i).trim()
  return i < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) ? undefined : [name, line.slice(i + 1).trim()]
}

export const readHeaderFile = (path: string): Effect.Effect<ReadonlyArray<readonly [string, string]>, CliError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.mapError(fs.stat(path), (e) => cliError("mandate/unreadable", systemWhy(e), path))
    if ((info.mode & 0o077) !== 0) {
      return yield* Effect.fail(cliError("mandate/key_permissions", `header file mode ${(info.mode & 0o777).toString(8)} lets others read it; chmod 600`, path))
    }
    const lines = new TextDecoder().decode(yield* readBytes(path)).split(/\r?\n/)
    const headers: Array<readonly [string, string]> = []
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue
      const h = parseHeader(line)
      if (h === undefined) return yield* Effect.fail(cliError("mandate/usage", "not a `Name: value` header", `${path} line ${i + 1}`))
      headers.push(h)
    }
    return headers
  })
