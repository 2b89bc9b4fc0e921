// Signing a bound request in the proxy (./proxy.ts; docs/bindings.md, "The client side"): the
// checks made before anything leaves, in order, then the Writ call (spec section 5) under the
// grant passed on to the server's advertised key. Each refusal keeps its own reason: the leaf does
// not name it (`forbidden_op` or `method_refused`, ./bound.ts), the server has not initialized or
// advertises no key (`unenforced_server`, adoption.md 2a), the tool is not pinned or changed
// (./policy.ts), an argument no bound names under `closed`, a request that names nothing.
import { Deferred, type Duration, Effect, Option } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import type { RandomBytes, Signer } from "../../kernel/services.js"
import type { VerifiedCall } from "../../writ/call.js"
import { delegate, type HeldWrit, makeCall } from "../../writ/issue.js"
import { writError, type WritError } from "../../writ/reason.js"
import { type BoundRequest, checkNamed } from "./bound.js"
import { ready } from "./client.js"
import { checkClosed, checkPinned, type PinFile } from "./policy.js"
import { advertisementOf } from "./present.js"
import type { Listed } from "./proxy-present.js"
import { type McpPolicyError, type MethodRefused, unenforcedServer, type UnenforcedServer, type UnreachableServer } from "./reason.js"

/** What the server advertised at initialize, and the grant passed on to its key. */
export interface Advertised {
  readonly advertised: boolean
  readonly chain: Option.Option<ReadonlyArray<Json>>
}

/** What the server's `initialize` result advertises, with the grant passed on to its key
 * unchanged (no narrowing): the executor must be the leaf holder (spec section 7 step 6). */
export const advertisedBy = (held: HeldWrit, result: JsonObject): Effect.Effect<Advertised, never, Signer | RandomBytes> => {
  const ad = advertisementOf(result.capabilities)
  if (ad === undefined) return Effect.succeed({ advertised: false, chain: Option.none() })
  return delegate(held, { hld: ad.did }).pipe(
    Effect.map((child) => ({ advertised: true, chain: Option.some<ReadonlyArray<Json>>(child.chain) })),
    Effect.catchTag("WritError", (e) =>
      Effect.as(Effect.logWarning(`the grant cannot be passed on to ${ad.did}: ${e.reason}`), { advertised: true, chain: Option.none() }))
  )
}

/** The proxy's state a signature reads. */
export interface Signing {
  readonly held: HeldWrit
  readonly pins: PinFile | undefined
  readonly closed: boolean
  readonly requestTimeout: Duration.DurationInput
  /** Resolved once the server answered `initialize` (or went away). */
  readonly initialized: Deferred.Deferred<void>
  /** The server's advertisement (undefined before initialize); failing once the server is gone. */
  readonly advertised: () => Effect.Effect<Advertised | undefined, UnreachableServer>
  readonly listed: Listed
  /** Lists the server's tools again, for their pins. */
  readonly relist: Effect.Effect<void, UnreachableServer>
}

export type SignError = WritError | McpPolicyError | UnenforcedServer | MethodRefused

/** The Writ call `r` leaves with, or the reason it does not leave. */
export const signBound = (s: Signing, r: BoundRequest): Effect.Effect<VerifiedCall, SignError, Signer | RandomBytes> =>
  Effect.gen(function*() {
    yield* checkNamed(s.held.leaf.value.bnd, r)
    // A client may pipeline its first calls behind `initialize` without waiting for the answer.
    if ((yield* s.advertised()) === undefined) yield* Deferred.await(s.initialized).pipe(Effect.timeoutOption(s.requestTimeout))
    const writ = yield* s.advertised()
    if (writ === undefined) return yield* Effect.fail(unenforcedServer("the server has not been initialized"))
    // Adoption.md 2a's first rule; and with no advertised key there is no executor to pass
    // the grant on to, so nothing is sent unenforced whatever the bounds.
    yield* ready(s.held.chain, writ.advertised)
    if (Option.isNone(writ.chain)) return yield* Effect.fail(unenforcedServer("the server does not advertise io.writ/delegation with its key"))
    if (s.pins !== undefined && r.method === "tools/call") {
      if (s.listed.stale) yield* s.relist
      yield* checkPinned(s.pins, r.name, s.listed.pins.get(r.name))
    }
    if (s.closed) yield* checkClosed(s.held.leaf, r.args)
    if (r.name === "") return yield* Effect.fail(writError("malformed", r.method === "resources/read" ? "params.uri" : "params.name", `a ${r.method} names what it asks for`))
    return yield* makeCall({ chain: writ.chain.value, op: r.op, args: r.args })
  })
