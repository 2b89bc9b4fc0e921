// An executor served in this process over the HTTP binding, on the memory stores, with a settable
// clock for the revoke rate limit; and a small PKI made with the openssl CLI for mTLS tests.
import { Clock, Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Signer } from "../../src/kernel/services.js"
import { VerificationCache } from "../../src/kernel/verification-cache.js"
import * as MemoryWrit from "../../src/store/memory/writ-stores.js"
import { layer as executorLayer } from "../../src/writ/executor/executor.js"
import {
  Application,
  type ApplicationService,
  Forwarder,
  type ForwarderService,
  RootPolicy
} from "../../src/writ/executor/services.js"
import { AuditLog, type AuditEntry, RevokeStore, StoreError } from "../../src/writ/executor/stores.js"
import { transportPeerBindings, type TransportBindings } from "../../src/bind/writ-http/peer.js"
import { type RateLimitOptions, RevokeRateLimit } from "../../src/bind/writ-http/rate-limit.js"
import { type ListenerLimits, listen, type TlsOptions } from "../../src/bind/writ-http/listen.js"
import type { Key } from "./support.js"

/** A clock the test moves, in milliseconds. */
export const settableClock = (start = 1_800_000_000_000) => {
  let millis = start
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => millis),
    currentTimeNanos: Effect.sync(() => BigInt(millis) * 1_000_000n),
    sleep: (d: Duration.Duration) => Effect.sleep(d).pipe(Effect.withClock(Clock.make()))
  }
  return { clock, advance: (ms: number) => void (millis += ms) }
}

export interface InProcOptions {
  readonly executorKey: Key
  readonly roots: ReadonlyArray<Key>
  readonly app: ApplicationService
  readonly bindings?: TransportBindings
  readonly tls?: TlsOptions
  readonly rate?: RateLimitOptions
  readonly rateClock?: Clock.Clock
  readonly maxBodyBytes?: number
  readonly limits?: ListenerLimits
  readonly act?: ReadonlyArray<string>
  /** Every revoke write fails (section 9: answered 503). */
  readonly failRevokeWrites?: boolean
  readonly forwarder?: ForwarderService
}

export interface InProc {
  readonly url: string
  readonly port: number
  /** The executor's audit record (section 9.3) as it stands. */
  readonly audit: Effect.Effect<ReadonlyArray<AuditEntry>>
}

/** The executor and its listener, in the current scope: closing the scope stops both. */
export const serveScoped = (o: InProcOptions): Effect.Effect<InProc, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stores = o.failRevokeWrites === true
      ? Layer.effectContext(Effect.map(Effect.context<Layer.Layer.Success<typeof MemoryWrit.layer>>(), (ctx) =>
        Context.add(ctx, RevokeStore, {
          ...Context.get(ctx, RevokeStore),
          record: () => Effect.fail(new StoreError({ operation: "test.revokeStore.record", message: "disk full" }))
        }))).pipe(Layer.provide(MemoryWrit.layer))
      : MemoryWrit.layer
    const services = Layer.mergeAll(
      Signer.fromSeed(o.executorKey.seed),
      Layer.succeed(Application, o.app),
      RootPolicy.list(o.roots.map((r) => r.did)),
      transportPeerBindings(o.bindings ?? {}),
      Layer.succeed(Forwarder, o.forwarder ?? { forward: () => Effect.succeed(Option.none()) }),
      VerificationCache.layer({ maxBytes: 1 << 20 })
    )
    const limiter = o.rate === undefined
      ? RevokeRateLimit.unlimited
      : Layer.effect(
        RevokeRateLimit,
        o.rateClock === undefined ? RevokeRateLimit.make(o.rate) : Effect.withClock(RevokeRateLimit.make(o.rate), o.rateClock)
      )
    const layer = Layer.merge(executorLayer.pipe(Layer.provideMerge(Layer.merge(services, stores))), limiter)
    // Built in this scope, so the executor's resources live as long as the listener.
    const context = yield* Layer.build(layer)
    const audit = Effect.orDie(Context.get(context, AuditLog).read)
    const bound = yield* listen({
      port: 0,
      ...(o.tls === undefined ? {} : { tls: o.tls }),
      ...(o.bindings === undefined ? {} : { bindings: o.bindings }),
      ...(o.maxBodyBytes === undefined ? {} : { maxBodyBytes: o.maxBodyBytes }),
      ...(o.limits === undefined ? {} : { limits: o.limits }),
      wellKnown: { endpoint: "", act: o.act ?? [] }
    }).pipe(Effect.provide(context), Effect.orDie)
    return { ...bound, audit }
  })

// ---------------------------------------------------------------------------------------------
// A small PKI (openssl CLI): a CA, a server certificate for 127.0.0.1, and client certificates
// with chosen subject alternative names.

export interface Pki {
  readonly dir: string
  readonly caCert: string
  readonly serverKey: string
  readonly serverCert: string
  /** A client certificate signed by `ca` ("ca" or "other") with `san` (openssl syntax, or none). */
  readonly client: (name: string, san: string | null, ca?: "ca" | "other") => { readonly key: string; readonly cert: string }
}

const openssl = (dir: string, args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })

export const makePki = (dir: string): Pki => {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  // CA files are named ca-*.{key,crt} so no client name can overwrite them.
  for (const ca of ["ca", "other"]) {
    openssl(dir, ["req", "-x509", ...ec, "-keyout", `ca-${ca}.key`, "-out", `ca-${ca}.crt`, "-days", "2", "-subj", `/CN=test ${ca}`])
  }
  const issue = (name: string, san: string | null, ca: string, serverAuth: boolean) => {
    name = `client-${name}`
    openssl(dir, ["req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`])
    const ext = [
      "basicConstraints=CA:FALSE",
      `extendedKeyUsage=${serverAuth ? "serverAuth" : "clientAuth"}`,
      ...(san === null ? [] : [`subjectAltName=${san}`])
    ].join("\n")
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`)
    openssl(dir, [
      "x509", "-req", "-in", `${name}.csr`, "-CA", `ca-${ca}.crt`, "-CAkey", `ca-${ca}.key`, "-CAcreateserial",
      "-out", `${name}.crt`, "-days", "2", "-extfile", `${name}.ext`
    ])
    return { key: readFileSync(join(dir, `${name}.key`), "utf8"), cert: readFileSync(join(dir, `${name}.crt`), "utf8") }
  }
  const server = issue("server", "IP:127.0.0.1,DNS:localhost", "ca", true)
  return {
    dir,
    caCert: readFileSync(join(dir, "ca-ca.crt"), "utf8"),
    serverKey: server.key,
    serverCert: server.cert,
    client: (name, san, ca = "ca") => issue(name, san, ca, false)
  }
}
