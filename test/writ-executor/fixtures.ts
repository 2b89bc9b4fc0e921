// Test fixtures: keys from fixed seeds, and writs, calls and revokes signed with them (section 1.4),
// plus an executor over a chosen store with a controllable application and a settable clock.
import { Clock, Context, Deferred, type Duration, Effect, Layer, Option, type Scope } from "effect"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { signerFromSeed } from "../../src/kernel/ed25519.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { Signer } from "../../src/kernel/services.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import { identity, signingInput, type ObjectType } from "../../src/writ/sign.js"
import { type ExecutorService, makeExecutorWith } from "../../src/writ/executor/executor.js"
import {
  Application,
  type ApplicationService,
  Forwarder,
  type ForwarderService,
  type Operation,
  type Outcome,
  PeerBindings,
  RootPolicy
} from "../../src/writ/executor/services.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { settableClock } from "../../src/writ/executor/settable-clock.js"
import type { BucketOptions } from "../../src/writ/executor/intake.js"

export interface Key {
  readonly seed: Uint8Array
  readonly did: string
  readonly sign: (typ: ObjectType, o: JsonObject) => JsonObject
}

export const key = (n: number): Key => {
  const seed = new Uint8Array(32).fill(n)
  const s = signerFromSeed(seed)
  return {
    seed,
    did: didKeyFromPublicKey(s.publicKey),
    sign: (typ, o) => ({ ...o, sig: encodeBase64url(s.sign(signingInput(typ, 1, o))) })
  }
}

let counter = 0
/** A fresh 16-byte nonce or id, deterministic per test run. */
export const nonce = (): string => {
  const b = new Uint8Array(16)
  new DataView(b.buffer).setUint32(0, ++counter)
  b[15] = 7
  return encodeBase64url(b)
}

export const EXP = 1_788_403_600
export const T0 = 1_788_400_000

export const writ = (
  iss: Key,
  hld: Key,
  bnd: JsonObject,
  parent: JsonObject | null = null,
  exp = EXP
): JsonObject =>
  iss.sign("writ", { v: 1, typ: "writ", iss: iss.did, hld: hld.did, bnd, prv: parent === null ? null : identity(parent), exp, nnc: nonce() })

export const call = (from: Key, chain: ReadonlyArray<JsonObject>, op: string, args: JsonObject = {}, id = nonce()): JsonObject =>
  from.sign("call", { v: 1, typ: "call", id, chain, from: from.did, op, args })

export const revoke = (iss: Key, chain: ReadonlyArray<JsonObject>): JsonObject =>
  iss.sign("revoke", {
    v: 1,
    typ: "revoke",
    writ: chain.length === 0 ? "*" : identity(chain[chain.length - 1]),
    iss: iss.did,
    chain
  })

export const act = (v: string): JsonObject => ({ t: "prefix", v })

/** A clock the test sets, in seconds, starting at T0; sleeping uses the real clock. */
export const settable = () => settableClock(Clock.make(), T0)

/** An application the test scripts: a function of the operation, and a log of every invocation. */
export const scripted = (f: (op: Operation) => Effect.Effect<Outcome>) => {
  const log: Array<Operation> = []
  const service: ApplicationService = {
    perform: (op) => Effect.suspend(() => {
      log.push(op)
      return f(op)
    })
  }
  return { service, log }
}

/** An operation that waits until released, and reports whether it was told to stop. */
export const gate = () =>
  Effect.map(Deferred.make<Outcome>(), (release) => ({
    release: (o: Outcome) => Deferred.succeed(release, o),
    run: Deferred.await(release)
  }))

export interface Rig {
  readonly executor: ExecutorService
  readonly executorKey: Key
}

/** An executor with key `executorKey` over `stores`, accepting roots `accept`, in the current scope. */
export const rig = (
  stores: Context.Context<StoreContext>,
  options: {
    readonly executorKey: Key
    readonly accept: ReadonlyArray<Key>
    readonly app: ApplicationService
    readonly peers?: Readonly<Record<string, ReadonlyArray<string>>>
    readonly forwarder?: ForwarderService
    readonly shutdownGrace?: Duration.DurationInput
    readonly refusalAudit?: BucketOptions
    readonly replayAudit?: BucketOptions
  }
): Effect.Effect<ExecutorService, never, Scope.Scope> =>
  makeExecutorWith({
    // A test executor stops at once unless the test is about the grace period (no test waits out
    // the executor's own default of ten seconds).
    shutdownGrace: options.shutdownGrace ?? 0,
    ...(options.refusalAudit === undefined ? {} : { refusalAudit: options.refusalAudit }),
    ...(options.replayAudit === undefined ? {} : { replayAudit: options.replayAudit })
  }).pipe(Effect.provide(executorContext(stores, options)))

/** What an executor over `stores` runs with: the stores and the services the rig's options name. */
export const executorContext = (
  stores: Context.Context<StoreContext>,
  options: Parameters<typeof rig>[1]
) =>
  Context.merge(
    stores,
    Context.make(Signer, Signer.make(options.executorKey.seed)).pipe(
      Context.add(Application, options.app),
      Context.add(RootPolicy, { accepts: (k: string) => Effect.succeed(options.accept.some((a) => a.did === k)) }),
      Context.add(PeerBindings, {
        speaksFor: (p: string, k: string) => Effect.succeed((options.peers?.[p] ?? []).includes(k))
      }),
      Context.add(Forwarder, options.forwarder ?? { forward: () => Effect.succeed(Option.none()) }),
      Context.add(VerificationCache, VerificationCache.make({ maxBytes: 1 << 20 }))
    )
  )

export const ok = (res?: Json): Outcome => (res === undefined ? { st: "ok" } : { st: "ok", res })

export { identity, Layer }
