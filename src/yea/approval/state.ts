// The state that goes round the client (SPEC-approval §4, approval.json `states`). Its plaintext:
//
//   {"v": 1, "tool", "inputHash", "sub", "plans": [planHash…], "round", "nonce", "exp"}
//
// Hashes and a nonce only, never secrets or personal data: the codec signs (HMAC-SHA256) but does
// not encrypt. It is bound to the tool, the input hash and the caller (`sub`; '' over stdio, one
// user per process), lives 10 minutes, and its nonce is consumed once (§5 step 4). Any failure
// to verify refuses the call with one message, whatever the reason (§5 step 1).
import { Context, Effect, Either, Layer, Predicate, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { decodeBase64url, encodeBase64url } from "../../kernel/base64url.js"
import { unixSeconds } from "../../kernel/clock.js"
import { RandomBytes } from "../../kernel/services.js"
import { canonical, readCanonical } from "../canonical.js"
import { refused, type Refused } from "./reason.js"

/** §4 lifetime. */
export const STATE_TTL_SECONDS = 600
/** §5: at most three rounds of asking. */
export const MAX_ROUNDS = 3

export const RequestState = Schema.Struct({
  v: Schema.Literal(1),
  tool: Schema.String,
  inputHash: Schema.String,
  sub: Schema.String,
  plans: Schema.Array(Schema.String),
  round: Schema.Int.pipe(Schema.between(1, MAX_ROUNDS)),
  nonce: Schema.String.pipe(Schema.minLength(1)),
  exp: Schema.Int
}).annotations({ identifier: "RequestState" })
export type RequestState = typeof RequestState.Type

/** The one message for every state failure (§5 step 1). */
export const STATE_REFUSED = "this approval is no longer valid (expired, already used, or not for this call); nothing ran"

export interface StateExpect {
  readonly tool: string
  readonly inputHash: string
  readonly sub: string
  readonly now: number
}

/** §5 step 1: the state is ours, for this tool, input and caller, and not expired. */
export const checkState = (state: unknown, expect: StateExpect): Effect.Effect<RequestState, Refused> =>
  Effect.gen(function* () {
    const s = yield* Effect.mapError(Schema.decodeUnknown(RequestState)(state), () => refused(STATE_REFUSED))
    if (s.tool !== expect.tool || s.inputHash !== expect.inputHash || s.sub !== expect.sub || !(expect.now < s.exp)) {
      return yield* Effect.fail(refused(STATE_REFUSED))
    }
    return s
  })

/** A fresh state for a form (round 1 on a first ask), nonce from `RandomBytes`, `exp` from the Clock. */
export const newState = (fields: { readonly tool: string; readonly inputHash: string; readonly sub: string; readonly plans: ReadonlyArray<string>; readonly round: number }) =>
  Effect.gen(function* () {
    const nonce = encodeBase64url(yield* (yield* RandomBytes).bytes(16))
    const now = yield* unixSeconds
    return { v: 1 as const, ...fields, nonce, exp: now + STATE_TTL_SECONDS } satisfies RequestState
  })

// ---------------------------------------------------------------------------------------------
// The codec: `b64url(canonical(payload)) "." b64url(HMAC-SHA256(key, bind "\0" body))`

export interface RequestStateCodecShape {
  /** Seals `payload` for a request bound to `bind` (tool and caller). */
  readonly mint: (payload: unknown, bind: string) => Effect.Effect<string>
  /** Opens a sealed state; any failure refuses with the one message. */
  readonly open: (sealed: unknown, bind: string) => Effect.Effect<unknown, Refused>
}

export class RequestStateCodec extends Context.Tag("mandate/yea/RequestStateCodec")<RequestStateCodec, RequestStateCodecShape>() {}

/** §4: at least 32 key bytes. */
export const MIN_STATE_KEY = 32

const mac = (key: Uint8Array, bind: string, body: string): Buffer => createHmac("sha256", key).update(`${bind}\u0000${body}`).digest()

export const makeCodec = (key: Uint8Array): RequestStateCodecShape => {
  if (key.length < MIN_STATE_KEY) throw new RangeError(`a request-state key has at least ${MIN_STATE_KEY} bytes`)
  const k = Uint8Array.from(key) // a copy: the caller's buffer may change
  return {
    mint: (payload, bind) =>
      Effect.sync(() => {
        const c = canonical(payload)
        // The payload is built by newState, so it always has a canonical form.
        const body = encodeBase64url(new TextEncoder().encode(Either.getOrThrow(c)))
        return `${body}.${encodeBase64url(mac(k, bind, body))}`
      }),
    open: (sealed, bind) =>
      Effect.suspend(() => {
        const no = Effect.fail(refused(STATE_REFUSED))
        if (typeof sealed !== "string" || sealed.length > 8192) return no
        const dot = sealed.indexOf(".")
        if (dot < 0) return no
        const body = sealed.slice(0, dot)
        const sig = decodeBase64url(sealed.slice(dot + 1))
        if (sig._tag === "None" || sig.value.length !== 32 || !timingSafeEqual(sig.value, mac(k, bind, body))) return no
        const bytes = decodeBase64url(body)
        if (bytes._tag === "None") return no
        const v = readCanonical(bytes.value)
        return Either.isRight(v) && Predicate.isRecord(v.right) ? Effect.succeed(v.right as unknown) : no
      })
  }
}

/** A codec with a random per-process key: safe only while one process handles every round (§4). */
export const randomCodecLayer: Layer.Layer<RequestStateCodec, never, RandomBytes> = Layer.effect(
  RequestStateCodec,
  Effect.map(Effect.flatMap(RandomBytes, (r) => r.bytes(32)), makeCodec)
)

/** A codec with a shared key, for several processes on one shared store (§4 "Keys"). */
export const keyedCodecLayer = (key: Uint8Array): Layer.Layer<RequestStateCodec> => Layer.sync(RequestStateCodec, () => makeCodec(key))
