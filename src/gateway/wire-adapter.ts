// The provider wire reading the server uses today, written against the contract in wire/types.ts:
// request fields, usage from answers and SSE streams, refusal bodies and prices. Input tokens are
// estimated by YEA's shared regex estimate (SPEC §8, src/yea/lens/estimate.ts) over the request's
// text as JSON: its punctuation counts too, which errs high, the safe side for a worst case. The
// output relayed by a stream without usage is still estimated at 4 characters a token (the meter
// counts characters, not text). The user price file is src/gateway/prices.ts; the server imports only `Wire`, so
// the finer modules planned under wire/ and price/ replace it with one edit here.
import { calcPrice } from "@pydantic/genai-prices"
import { Either } from "effect"
import { est } from "../yea/lens/estimate.js"
import type { MakeStreamMeter, NoPrice, PriceOf, Provider, ReadRequest, ReadUsage, RequestInfo, Route, Usage } from "./wire/types.js"

const providerOf = (route: Route): Provider => (route === "anthropic.messages" ? "anthropic" : "openai")
const enc = new TextEncoder()
const dec = new TextDecoder()
const tokensOfText = (n: number) => Math.ceil(n / 4)

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0)

export const readRequest: ReadRequest = (route, body) => {
  let json: unknown
  try {
    json = JSON.parse(dec.decode(body))
  } catch {
    return Either.left({ _tag: "WireRefusal", code: "gateway/malformed_request", message: "the request body is not JSON", status: 400 })
  }
  if (!isObj(json)) return Either.left({ _tag: "WireRefusal", code: "gateway/malformed_request", message: "the request body is not a JSON object", status: 400 })
  if (typeof json.model !== "string" || json.model.length === 0) {
    return Either.left({ _tag: "WireRefusal", code: "gateway/malformed_request", message: "the request names no model", status: 400 })
  }
  const max = json.max_tokens ?? json.max_completion_tokens ?? json.max_output_tokens
  if (max !== undefined && (typeof max !== "number" || !Number.isInteger(max) || max < 1)) {
    return Either.left({ _tag: "WireRefusal", code: "gateway/malformed_request", message: "max tokens must be a positive integer", status: 400 })
  }
  const stream = json.stream === true
  const text = JSON.stringify([json.messages, json.input, json.system, json.tools, json.instructions])
  let upstreamBody = body
  if (route === "openai.chat" && stream) {
    const so = isObj(json.stream_options) ? json.stream_options : {}
    if (so.include_usage !== true) upstreamBody = enc.encode(JSON.stringify({ ...json, stream_options: { ...so, include_usage: true } }))
  }
  const info: RequestInfo = {
    route,
    provider: providerOf(route),
    model: json.model,
    stream,
    maxOutputTokens: typeof max === "number" ? max : undefined,
    inputTokensEstimate: est(text),
    upstreamBody
  }
  return Either.right(info)
}

const usageOf = (route: Route, u: unknown): Usage | undefined => {
  if (!isObj(u)) return undefined
  if (route === "openai.chat") {
    const cached = isObj(u.prompt_tokens_details) ? num(u.prompt_tokens_details.cached_tokens) : 0
    return { inputTokens: num(u.prompt_tokens), outputTokens: num(u.completion_tokens), cacheReadTokens: cached, cacheWriteTokens: 0, estimated: false }
  }
  if (route === "openai.responses") {
    const cached = isObj(u.input_tokens_details) ? num(u.input_tokens_details.cached_tokens) : 0
    return { inputTokens: num(u.input_tokens), outputTokens: num(u.output_tokens), cacheReadTokens: cached, cacheWriteTokens: 0, estimated: false }
  }
  return {
    inputTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens),
    outputTokens: num(u.output_tokens),
    cacheReadTokens: num(u.cache_read_input_tokens),
    cacheWriteTokens: num(u.cache_creation_input_tokens),
    estimated: false
  }
}

export const readUsage: ReadUsage = (route, body) => {
  try {
    const json: unknown = JSON.parse(dec.decode(body))
    return isObj(json) ? usageOf(route, json.usage) : undefined
  } catch {
    return undefined
  }
}

export const makeStreamMeter: MakeStreamMeter = (info) => {
  let buffer = ""
  let usage: Usage | undefined
  let anthropicIn: Usage | undefined
  let chars = 0
  let model: string | undefined
  const line = (l: string) => {
    if (!l.startsWith("data:")) return
    const data = l.slice(5).trim()
    if (data === "[DONE]" || data.length === 0) return
    let j: unknown
    try {
      j = JSON.parse(data)
    } catch {
      return
    }
    if (!isObj(j)) return
    if (typeof j.model === "string") model = j.model
    if (info.route === "openai.chat") {
      if (j.usage !== null && j.usage !== undefined) usage = usageOf("openai.chat", j.usage)
      if (Array.isArray(j.choices)) {
        for (const c of j.choices) if (isObj(c) && isObj(c.delta) && typeof c.delta.content === "string") chars += c.delta.content.length
      }
    } else if (info.route === "openai.responses") {
      if (typeof j.delta === "string") chars += j.delta.length
      if (j.type === "response.completed" && isObj(j.response)) usage = usageOf("openai.responses", j.response.usage)
    } else {
      if (j.type === "message_start" && isObj(j.message)) anthropicIn = usageOf("anthropic.messages", j.message.usage)
      if (j.type === "content_block_delta" && isObj(j.delta) && typeof j.delta.text === "string") chars += j.delta.text.length
      if (j.type === "message_delta" && isObj(j.usage)) {
        const out = num(j.usage.output_tokens)
        const base = anthropicIn ?? { inputTokens: info.inputTokensEstimate, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false }
        usage = { ...base, outputTokens: out }
      }
    }
  }
  return {
    push: (chunk) => {
      buffer += dec.decode(chunk, { stream: true })
      let i: number
      while ((i = buffer.indexOf("\n")) >= 0) {
        line(buffer.slice(0, i).replace(/\r$/, ""))
        buffer = buffer.slice(i + 1)
      }
      return chunk
    },
    usage: () => usage,
    relayedOutputTokensEstimate: () => tokensOfText(chars),
    model: () => model
  }
}

/** Provider-shaped refusal bodies: OpenAI's `{error: {message, type, param, code}}`, Anthropic's `{type: "error", error: {type, message}}` (with `code` beside). */
export const refusalBody = (provider: Provider, status: number, code: string, message: string): Uint8Array => {
  const type = status === 402 ? "insufficient_quota" : status === 401 ? "authentication_error" : status === 404 ? "not_found_error" : status === 413 ? "request_too_large" : status >= 500 ? "api_error" : status === 403 ? "permission_error" : "invalid_request_error"
  return enc.encode(JSON.stringify(provider === "openai"
    ? { error: { message, type, param: null, code } }
    : { type: "error", error: { type, message, code } }))
}

const microOf = (perMTok: unknown, tokens: number): number =>
  typeof perMTok === "number" ? perMTok * tokens : 0

/** micro-USD = tokens × (USD per million tokens), rounded up. */
export const priceOf: PriceOf = (provider, model, usage, at) => {
  const found = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId: provider, timestamp: at })
  if (found === null) return Either.left<NoPrice>({ _tag: "NoPrice", provider, model })
  const p = found.model_price as unknown as Record<string, unknown>
  const plainIn = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens)
  const total = microOf(p.input_mtok, plainIn) + microOf(p.cache_read_mtok ?? p.input_mtok, usage.cacheReadTokens) +
    microOf(p.cache_write_mtok ?? p.input_mtok, usage.cacheWriteTokens) + microOf(p.output_mtok, usage.outputTokens)
  return Either.right(BigInt(Math.ceil(total - 1e-9)))
}

export const Wire = { readRequest, readUsage, makeStreamMeter, refusalBody, priceOf } as const
export type WireModules = typeof Wire
