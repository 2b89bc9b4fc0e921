// A user price file (`mandate gateway --prices FILE`, issue 29): per provider and model, USD per
// million input, output and cached-input tokens. Its entries override @pydantic/genai-prices for
// the models they name and add models it does not know; every other model keeps its price there.
import { Either, ParseResult, Schema } from "effect"
import { Wire } from "./wire-adapter.js"
import type { PriceOf } from "./wire/types.js"

const PerMillion = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())
export const PriceEntry = Schema.Struct({
  provider: Schema.Literal("openai", "anthropic"),
  model: Schema.String.pipe(Schema.minLength(1)),
  input: PerMillion,
  output: PerMillion,
  cached_input: Schema.optional(PerMillion)
})
export const PriceFile = Schema.Struct({ models: Schema.Array(PriceEntry) })
export type PriceFile = typeof PriceFile.Type

/** The file's text decoded, or the reason it is not a price file. */
export const decodePriceFile = (text: string): Either.Either<PriceFile, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(Schema.parseJson(PriceFile))(text), (e) => ParseResult.TreeFormatter.formatErrorSync(e))

/** Wire.priceOf with the file's entries first; micro-USD rounded up as there. */
export const withPriceFile = (file: PriceFile): PriceOf => {
  const table = new Map(file.models.map((m) => [`${m.provider}/${m.model}`, m]))
  return (provider, model, usage, at) => {
    const p = table.get(`${provider}/${model}`)
    if (p === undefined) return Wire.priceOf(provider, model, usage, at)
    const cached = usage.cacheReadTokens + usage.cacheWriteTokens
    const plain = Math.max(0, usage.inputTokens - cached)
    const total = p.input * plain + (p.cached_input ?? p.input) * cached + p.output * usage.outputTokens
    return Either.right(BigInt(Math.ceil(total - 1e-9)))
  }
}
