// The client side of Writ-delegated budgets (writ-budget.ts): a `fetch` for the official OpenAI
// and Anthropic SDKs (their `fetch` option) that signs each model request as a Writ call (spec
// section 5: the holder's proof of possession, one fresh `id` per request) and sends it in the
// `Writ-Call` header; the SDKs are otherwise unmodified. The request is the caller's, and so is the
// transport: `fetch` defaults to the platform's and can be replaced (tests, proxies).
import { Effect, Layer } from "effect"
import { encodeBase64url } from "../kernel/base64url.js"
import { didKeyFromPublicKey } from "../kernel/didkey.js"
import type { Json, JsonObject } from "../kernel/json.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { delegate, holdChain } from "../writ/issue.js"
import { canonicalBytes, signObject } from "../writ/sign.js"
import { CALL_HEADER, requestDigest, TOTAL_BOUND, writOp } from "./writ-budget.js"
import { routeOfPath } from "./wire/types.js"

export interface WritFetchOptions {
  /** The chain, root first: its leaf is held by `holderKey`'s key (then `executor` is required),
   * or was issued by it to the gateway. */
  readonly chain: ReadonlyArray<Json>
  /** The holder's 32-byte Ed25519 seed: it signs every call (and the leaf to the gateway). */
  readonly holderKey: Uint8Array
  /** The gateway's did:key: a leaf with the held writ's bounds is issued to it once, on first use. */
  readonly executor?: string
  /** The `usd` argument of each call (micro-USD): the most one call may consume. Default: the leaf's `usd` total. */
  readonly usd?: number
  /** Keep the SDK's own key (a gateway key beside the writ: both must hold). Default: the writ stands alone. */
  readonly keepKey?: boolean
  readonly fetch?: typeof globalThis.fetch
}

const bodyBytes = (body: unknown): Uint8Array | undefined =>
  typeof body === "string" ? new TextEncoder().encode(body) : body instanceof Uint8Array ? body : body instanceof ArrayBuffer ? new Uint8Array(body) : undefined

/** A `fetch` that adds a signed Writ call to every model request (`new OpenAI({ fetch: writFetch(...) })`). */
export const writFetch = (options: WritFetchOptions): typeof globalThis.fetch => {
  const base = options.fetch ?? globalThis.fetch
  const services = Layer.merge(Signer.fromSeed(options.holderKey), RandomBytes.live)
  // The chain calls are signed under: the given one, or it extended by a leaf to the executor.
  let chain: Promise<ReadonlyArray<JsonObject>> | undefined
  const chainFor = () =>
    chain ??= Effect.runPromise(Effect.gen(function*() {
      const me = didKeyFromPublicKey((yield* Signer).publicKey)
      const given = options.chain as ReadonlyArray<JsonObject>
      const leaf = given[given.length - 1]
      if (options.executor === undefined || leaf?.hld !== me) return given
      const held = yield* holdChain(given)
      return (yield* delegate(held, { hld: options.executor })).chainJson
    }).pipe(Effect.provide(services)))

  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
    const route = routeOfPath(url.pathname.replace(/^.*(\/v1\/)/, "$1"))
    const bytes = bodyBytes(init?.body)
    if (route === undefined || bytes === undefined) return base(input, init)
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { model?: unknown }
    const calls = await chainFor()
    const leafBnd = (calls[calls.length - 1]?.bnd ?? {}) as Record<string, { t?: string; v?: unknown }>
    const usd = options.usd ?? (typeof leafBnd[TOTAL_BOUND]?.v === "number" ? leafBnd[TOTAL_BOUND].v : 0)
    const args: JsonObject = {
      ...(leafBnd.currency !== undefined ? { currency: "USD" } : {}),
      model: typeof parsed.model === "string" ? parsed.model : "", [TOTAL_BOUND]: usd, req: requestDigest(bytes)
    }
    const signed = await Effect.runPromise(Effect.gen(function*() {
      const from = didKeyFromPublicKey((yield* Signer).publicKey)
      const id = encodeBase64url(yield* (yield* RandomBytes).bytes(16))
      return yield* signObject({ v: 1, typ: "call", id, chain: calls, from, op: writOp(route), args })
    }).pipe(Effect.provide(services)))
    const headers = new Headers(init?.headers)
    if (options.keepKey !== true) {
      headers.delete("authorization")
      headers.delete("x-api-key")
    }
    headers.set(CALL_HEADER, encodeBase64url(canonicalBytes(signed)))
    return base(input, { ...init, headers })
  }) as typeof globalThis.fetch
}
