// Where `mandate yea openapi` reads its OpenAPI document (docs/cli.md "Bridges": `<spec|url>`):
// a file, or an `http(s)://` URL fetched once at start through the platform's HttpClient. The
// body is read whole but bounded (a document past MAX_SPEC is refused by name, never buffered
// without end), and a status other than 2xx or a body that is not JSON is a clear error.
import { FileSystem, HttpClient } from "@effect/platform"
import { Effect, Stream } from "effect"
import { cliError } from "./writ-io.js"

export const MAX_SPEC = 16 * 1024 * 1024

const isUrl = (s: string) => /^https?:\/\//i.test(s)

const fetchSpec = (url: string) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const res = yield* Effect.mapError(client.get(url), (e) => cliError("mandate/unreachable", e.message, url))
    if (res.status < 200 || res.status > 299) return yield* Effect.fail(cliError("mandate/unreachable", `the spec URL answered ${res.status}`, url))
    const chunks: Array<Uint8Array> = []
    let size = 0
    yield* res.stream.pipe(
      Stream.mapError((e) => cliError("mandate/unreachable", e.message, url)),
      Stream.runForEachWhile((c) =>
        Effect.suspend(() => {
          size += c.length
          if (size > MAX_SPEC) return Effect.fail(cliError("mandate/bad_spec", `the document is over ${MAX_SPEC} bytes`, url))
          chunks.push(c)
          return Effect.succeed(true)
        })
      )
    )
    return Buffer.concat(chunks).toString("utf8")
  })

/** The parsed document at `source` (a file or a URL). */
export const readSpec = (source: string) =>
  Effect.gen(function* () {
    const text = isUrl(source)
      ? yield* fetchSpec(source)
      : yield* Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.mapError(fs.readFileString(source), (e) => cliError("mandate/unreadable", e.message, source)))
    return yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => cliError("mandate/bad_spec", "not JSON", source) })
  })
