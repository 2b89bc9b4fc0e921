// `mandate writ serve`: an executor over the HTTP binding (spec section 10) with the embedded
// SQLite store (or PostgreSQL, `--store postgres://...#SCHEMA`, one worker of several) and a handler module that exports its ApplicationService. Prints one JSON line
// `{"url","did","resolved"}` once it listens (after resolving pending records, section 9), then
// serves until killed. Mounted by src/cli/writ.ts; also runnable on its own
// (`tsx src/cli/writ-serve.ts --port ...`), which is how the benchmark and the kill test spawn it.
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, HashMap, Option } from "effect"
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { encodeCanonical } from "../kernel/canonical.js"
import { describeServeError, serveExecutor, ServeError, type ServeOptions } from "../app/writ-serve.js"
import { DEFAULT_LIMITS } from "../bind/writ-http/listen.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES } from "../kernel/verification-cache.js"
import { DEFAULT_ROOT_LIFETIME_SECONDS } from "../writ/chain.js"
import { exitFailed } from "./io.js"

const port = Options.integer("port").pipe(Options.withDefault(8080), Options.withDescription("TCP port (0: any free port)"))
const host = Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on"))
const store = Options.text("store").pipe(Options.withDescription(
  "SQLite file holding every store (created if absent), or postgres://...#SCHEMA: one of several workers serving this key on that schema"
))
const orphanSweep = Options.integer("orphan-sweep-ms").pipe(Options.withDefault(10_000), Options.withDescription("How often to resolve the pending records of processes sharing the store that are gone (milliseconds)"))
const leaseMs = Options.integer("lease-ms").pipe(Options.withDefault(15_000), Options.withDescription("With a SQLite file: this process's owner lease period; another process sharing the file takes over its pending calls once its heartbeat is older (milliseconds)"))
const pgConnections = Options.integer("pg-connections").pipe(Options.withDefault(10), Options.withDescription("With a postgres:// store: this worker's pool size"))
const key = Options.file("key", { exists: "yes" }).pipe(Options.withDescription("The executor's key file (mandate keygen; mode 0600)"))
const root = Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1); repeat for several"))
const handler = Options.file("handler", { exists: "yes" }).pipe(Options.withDescription("Module exporting the ApplicationService (default or `application`)"))
const bindings = Options.file("bindings", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Bindings file: transport identity -> [did:key] (section 7.6)"))
const tlsCert = Options.file("tls-cert", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Server certificate (PEM): serve HTTPS"))
const tlsKey = Options.file("tls-key", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Server private key (PEM)"))
const clientCa = Options.file("client-ca", { exists: "yes" }).pipe(Options.optional, Options.withDescription("CA (PEM) client certificates must chain to: mTLS"))
const allowAnonymous = Options.boolean("allow-anonymous").pipe(Options.withDescription("With --client-ca, also admit clients that present no certificate"))
const forward = Options.keyValueMap("forward").pipe(Options.optional, Options.withDescription("did:key=URL of an executor below, for forwarding revokes (section 9.1)"))
const act = Options.text("act").pipe(Options.repeated, Options.withDescription("A prefix listed in /.well-known/writ (Appendix B)"))
const publicUrl = Options.text("public-url").pipe(Options.optional, Options.withDescription("Endpoint published in /.well-known/writ"))
const synchronous = Options.choice("synchronous", ["full", "normal"]).pipe(
  Options.withDefault("full" as const),
  Options.withDescription("SQLite synchronous: full (every commit synced; survives power loss) or normal (synced at checkpoints; survives a killed process)")
)
/** A listener limit (section 12): a positive integer with its default from the binding. */
const limit = (name: string, dflt: number, description: string) =>
  Options.integer(name).pipe(Options.withDefault(dflt), Options.withDescription(description))
const headerTimeout = limit("header-timeout-ms", DEFAULT_LIMITS.headersTimeoutMs,
  "Milliseconds a connection has to send a request's headers (also closes a connection that sends nothing)")
const bodyTimeout = limit("body-timeout-ms", DEFAULT_LIMITS.bodyTimeoutMs,
  "Milliseconds more for the body: a request must be whole within header + body timeouts")
const idleTimeout = limit("idle-timeout-ms", DEFAULT_LIMITS.idleTimeoutMs, "Milliseconds a kept-alive connection may sit idle between requests")
const maxConnections = limit("max-connections", DEFAULT_LIMITS.maxConnections, "Connections open at once; more are closed at accept")
const maxPerPeer = Options.integer("max-connections-per-peer").pipe(Options.optional, Options.withDescription(
  "Connections one peer (remote address) may hold, below --max-connections; more are answered 429 and closed (default: a quarter of --max-connections)"
))
const rootLifetime = Options.integer("root-lifetime").pipe(
  Options.withDefault(DEFAULT_ROOT_LIFETIME_SECONDS),
  Options.withDescription("Seconds a root writ may still have to live (section 12: 86400); a root expiring later is refused expired; 0 lifts the limit")
)
const cacheBytes = limit("verification-cache-bytes", DEFAULT_VERIFICATION_CACHE_BYTES,
  "Bytes the verification cache (decoded keys, passed signature checks) may hold")
const ledger = Options.text("ledger").pipe(Options.optional, Options.withDescription("A decision ledger (SQLite file or postgres://...#schema) receiving every section 7 decision; created when absent"))
const revokeBurst = Options.integer("revoke-burst").pipe(Options.withDefault(60), Options.withDescription("Revokes a peer may send at once (section 12)"))
const revokeRate = Options.integer("revoke-rate").pipe(Options.withDefault(10), Options.withDescription("Revokes per second a peer regains"))

const readPem = (path: Option.Option<string>) =>
  Option.isNone(path)
    ? Effect.succeed(undefined)
    : Effect.flatMap(FileSystem.FileSystem, (fs) =>
      Effect.mapError(fs.readFileString(path.value), (e) => new ServeError({ code: "mandate/unreadable", message: e.message })))

export const writServeCommand = Command.make(
  "serve",
  { port, host, store, key, root, handler, bindings, tlsCert, tlsKey, clientCa, allowAnonymous, forward, act, publicUrl, synchronous, ledger, revokeBurst, revokeRate, headerTimeout, bodyTimeout, idleTimeout, maxConnections, maxPerPeer, rootLifetime, cacheBytes, pgConnections, orphanSweep, leaseMs },
  (o) =>
    Effect.gen(function*() {
      const cert = yield* readPem(o.tlsCert)
      const tkey = yield* readPem(o.tlsKey)
      const ca = yield* readPem(o.clientCa)
      if ((cert === undefined) !== (tkey === undefined)) {
        return yield* Effect.fail(new ServeError({ code: "mandate/bad_tls", message: "--tls-cert and --tls-key go together" }))
      }
      for (const [flag, v] of [["verification-cache-bytes", o.cacheBytes], ["header-timeout-ms", o.headerTimeout], ["body-timeout-ms", o.bodyTimeout], ["idle-timeout-ms", o.idleTimeout], ["max-connections", o.maxConnections], ["pg-connections", o.pgConnections], ["orphan-sweep-ms", o.orphanSweep], ["lease-ms", o.leaseMs]] as const) {
        if (v < 1) return yield* Effect.fail(new ServeError({ code: "mandate/bad_limit", message: `--${flag} must be at least 1` }))
      }
      // Section 12: one peer alone must never be able to fill the listener.
      if (Option.isSome(o.maxPerPeer) && (o.maxPerPeer.value < 1 || (o.maxPerPeer.value >= o.maxConnections && o.maxConnections > 1))) {
        return yield* Effect.fail(new ServeError({ code: "mandate/bad_limit", message: "--max-connections-per-peer must be at least 1 and below --max-connections" }))
      }
      if (o.rootLifetime < 0) {
        return yield* Effect.fail(new ServeError({ code: "mandate/bad_limit", message: "--root-lifetime must be 0 (no limit) or more" }))
      }
      if (ca !== undefined && cert === undefined) {
        return yield* Effect.fail(new ServeError({ code: "mandate/bad_tls", message: "--client-ca needs --tls-cert and --tls-key" }))
      }
      const options: ServeOptions = {
        port: o.port,
        host: o.host,
        storeFile: o.store,
        maxConnections: o.pgConnections,
        orphanSweepMs: o.orphanSweep,
        leaseMs: o.leaseMs,
        seedFile: o.key,
        roots: o.root,
        handlerModule: o.handler,
        ...(Option.isSome(o.bindings) ? { bindings: o.bindings.value } : {}),
        ...(cert !== undefined && tkey !== undefined
          ? { tls: { cert, key: tkey, ...(ca === undefined ? {} : { clientCa: ca }), allowAnonymous: o.allowAnonymous } }
          : {}),
        ...(Option.isSome(o.forward) ? { forward: Object.fromEntries(HashMap.toEntries(o.forward.value)) } : {}),
        act: o.act,
        ...(Option.isSome(o.publicUrl) ? { publicUrl: o.publicUrl.value } : {}),
        ...(Option.isSome(o.ledger) ? { ledger: o.ledger.value } : {}),
        revokeRate: { burst: o.revokeBurst, perSecond: o.revokeRate },
        synchronous: o.synchronous,
        rootLifetimeSeconds: o.rootLifetime === 0 ? null : o.rootLifetime,
        verificationCacheBytes: o.cacheBytes,
        limits: { headersTimeoutMs: o.headerTimeout, bodyTimeoutMs: o.bodyTimeout, idleTimeoutMs: o.idleTimeout, maxConnections: o.maxConnections, ...(Option.isSome(o.maxPerPeer) ? { maxConnectionsPerPeer: o.maxPerPeer.value } : {}) }
      }
      return yield* serveExecutor(options, (r) => Console.log(encodeCanonical({ url: r.url, did: r.did, resolved: r.resolved }, "utf16")))
    }).pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(Console.error(`error: ${describeServeError(e, "mandate writ serve")}`), exitFailed)
      )
    )
).pipe(Command.withDescription("Run a Writ executor over HTTP (section 10) with the SQLite (or PostgreSQL) store and a handler module"))

// Run on its own when this file is the entry point.
const entry = process.argv[1]
const isMain = (() => {
  try {
    return entry !== undefined && realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
})()
if (isMain) {
  const cli = Command.run(Command.make("writ-serve").pipe(Command.withSubcommands([writServeCommand])), { name: "writ-serve", version: "0.1.0" })
  cli([process.argv[0], process.argv[1], "serve", ...process.argv.slice(2)]).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
}
