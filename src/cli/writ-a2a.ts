// `mandate writ a2a-serve`: an A2A agent endpoint (Agent Card, JSON-RPC and HTTP+JSON; A2A 1.0
// with 0.3 read over JSON-RPC)
// in front of an executor whose application is a handler module, as `writ serve` is over HTTP.
// Prints one JSON line `{"url","card","did","durable","resolved"}` once it listens, then serves
// until killed.
//
// `mandate writ a2a-send URL FILE`: sends a call as an A2A message (the call in a data part of
// application/writ-call+json) or a revoke in a `CancelTask`, to the agent whose card is at URL,
// over JSON-RPC or HTTP+JSON (`--transport`; default the card's preferred),
// and verifies the answer (src/bind/writ-a2a/http-client.ts). `--out` keeps a call's answer as
// `{"tally","res"}`, the section 10 form `writ call --undo` reads.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import { startA2a } from "../app/writ-a2a-serve.js"
import { describeServeError } from "../app/inputs.js"
import { resolvePeer, sendCall, sendRevoke } from "../bind/writ-a2a/http-client.js"
import { parseAllowList } from "../bind/writ-a2a/push.js"
import type { A2aError } from "../bind/writ-a2a/errors.js"
import { encodeCanonical } from "../kernel/canonical.js"
import type { Json } from "../kernel/json.js"
import { exitFailed } from "./io.js"
import { shortKey } from "./writ-check.js"
import { cliError, type CliReason, describeFailure, forceOption, readObjectFile, runCommand, writeJson } from "./writ-io.js"

const readPem = (path: Option.Option<string>) =>
  Option.isNone(path)
    ? Effect.succeed(undefined)
    : Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.mapError(fs.readFileString(path.value), (e) => cliError("mandate/unreadable", e.message, path.value)))

export const writA2aServeCommand = Command.make(
  "a2a-serve",
  {
    key: Options.file("key", { exists: "yes" }).pipe(Options.withDescription("The executor's key file (mandate keygen; mode 0600): it signs every tally")),
    root: Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1); repeat for several")),
    handler: Options.file("handler", { exists: "yes" }).pipe(Options.withDescription("Module exporting the ApplicationService (default or `application`)")),
    store: Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file of every store (absent: memory, lost on restart)")),
    port: Options.integer("port").pipe(Options.withDefault(8070), Options.withDescription("TCP port (0: any free port)")),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1"), Options.withDescription("Address to listen on")),
    path: Options.text("path").pipe(Options.withDefault("/a2a"), Options.withDescription("Path of the JSON-RPC endpoint; the HTTP+JSON paths are under it")),
    publicUrl: Options.text("public-url").pipe(Options.optional, Options.withDescription("Endpoint URL the Agent Card publishes (default: the one it listens on)")),
    name: Options.text("name").pipe(Options.optional, Options.withDescription("The agent's name in its Agent Card")),
    bound: Options.text("bound").pipe(Options.repeated, Options.withDescription("A bound name listed in the card's Writ extension entry; repeat for several")),
    bindings: Options.file("bindings", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Bindings file: transport identity -> [did:key] (section 7.6), for mTLS peers")),
    tlsCert: Options.file("tls-cert", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Server certificate (PEM): serve HTTPS")),
    tlsKey: Options.file("tls-key", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Server private key (PEM)")),
    clientCa: Options.file("client-ca", { exists: "yes" }).pipe(Options.optional, Options.withDescription("CA (PEM) client certificates must chain to: mTLS")),
    allowAnonymous: Options.boolean("allow-anonymous").pipe(Options.withDescription("With --client-ca, also admit clients that present no certificate")),
    pushAllow: Options.text("push-allow").pipe(
      Options.repeated,
      Options.withDescription("A webhook host (host or host:port) or URL prefix push notifications may go to; repeat for several (none: no push notifications)")
    )
  },
  (o) =>
    Effect.scoped(Effect.gen(function*() {
      if (!o.path.startsWith("/")) return yield* Effect.fail(cliError("mandate/usage", "--path starts with /"))
      const cert = yield* readPem(o.tlsCert)
      const tlsKey = yield* readPem(o.tlsKey)
      const ca = yield* readPem(o.clientCa)
      if ((cert === undefined) !== (tlsKey === undefined)) return yield* Effect.fail(cliError("mandate/bad_tls", "--tls-cert and --tls-key go together"))
      if (ca !== undefined && cert === undefined) return yield* Effect.fail(cliError("mandate/bad_tls", "--client-ca needs --tls-cert and --tls-key"))
      const pushAllow = yield* Effect.mapError(parseAllowList(o.pushAllow), fromA2a)
      const running = yield* startA2a({
        seedFile: o.key,
        roots: o.root,
        handlerModule: o.handler,
        port: o.port,
        host: o.host,
        path: o.path,
        bounds: o.bound,
        pushAllow,
        ...(Option.isSome(o.store) ? { storeFile: o.store.value } : {}),
        ...(Option.isSome(o.publicUrl) ? { publicUrl: o.publicUrl.value } : {}),
        ...(Option.isSome(o.name) ? { name: o.name.value } : {}),
        ...(Option.isSome(o.bindings) ? { bindings: o.bindings.value } : {}),
        ...(cert !== undefined && tlsKey !== undefined
          ? { tls: { cert, key: tlsKey, ...(ca === undefined ? {} : { clientCa: ca }), allowAnonymous: o.allowAnonymous } }
          : {})
      })
      yield* Console.log(encodeCanonical({ url: running.url, card: running.card, did: running.did, durable: running.durable, resolved: running.resolved }, "utf16"))
      return yield* Effect.never
    })).pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(
          Console.error(`error: ${e._tag === "ServeError" ? describeServeError(e, "mandate writ a2a-serve") : describeFailure({ reason: e.reason, path: e.path ?? "mandate writ a2a-serve", message: e.message })}`),
          exitFailed
        )
      )
    )
).pipe(Command.withDescription("Run an A2A agent endpoint (Agent Card, JSON-RPC and HTTP+JSON; A2A 1.0 with 0.3 read) in front of a Writ executor and a handler module"))

// An executor's implementation code (section 11) is relayed as the executor gave it.
const fromA2a = (e: A2aError) => cliError(e.reason as CliReason, e.message, e.path)

export const writA2aSendCommand = Command.make(
  "a2a-send",
  {
    url: Args.text({ name: "URL" }).pipe(Args.withDescription("The agent's base URL (its card at /.well-known/agent-card.json) or its card's URL")),
    file: Args.text({ name: "FILE" }).pipe(Args.withDescription("A signed call (sent as a message) or revoke (sent in a CancelTask)")),
    task: Options.text("task").pipe(Options.withDefault("writ-revoke"), Options.withDescription("With a revoke: the task id the CancelTask names")),
    form: Options.choice("form", ["part", "metadata"]).pipe(Options.withDefault("part" as const), Options.withDescription("Where the call travels: a data part (preferred) or message metadata")),
    protocol: Options.choice("protocol", ["1.0", "0.3"]).pipe(Options.optional, Options.withDescription("Speak this A2A version to the card's endpoint (default: 1.0 when the card offers it, else 0.3)")),
    transport: Options.choice("transport", ["jsonrpc", "rest"]).pipe(
      Options.optional,
      Options.withDescription("The binding: JSON-RPC, or HTTP+JSON (REST, A2A 1.0 only) (default: the card's preferred of the two)")
    ),
    out: Options.file("out").pipe(Options.optional, Options.withDescription("Where to write a call's answer as {\"tally\",\"res\"}")),
    requireSignedCard: Options.boolean("require-signed-card").pipe(
      Options.withDescription("Refuse an Agent Card without a signature (A2A 1.0 section 8.4) by the executor key it names (a signed card is always verified)")
    ),
    force: forceOption
  },
  (o) =>
    runCommand(Effect.gen(function*() {
      const { value } = yield* readObjectFile(o.file, "a call or a revoke")
      if (value.typ !== "call" && value.typ !== "revoke") return yield* Effect.fail(cliError("wrong_type", "a2a-send takes a call or a revoke", o.file))
      if (Option.isSome(o.transport) && o.transport.value === "rest" && Option.isSome(o.protocol) && o.protocol.value === "0.3") {
        return yield* Effect.fail(cliError("mandate/usage", "--transport rest speaks A2A 1.0 only"))
      }
      const found = yield* Effect.mapError(resolvePeer(o.url, Option.getOrUndefined(o.transport), o.requireSignedCard), fromA2a)
      const peer = Option.isSome(o.protocol) ? { ...found, version: o.protocol.value } : found
      yield* Console.log(`A2A ${peer.version}${peer.transport === "rest" ? " HTTP+JSON" : ""} at ${peer.url}`)
      if (value.typ === "call") {
        const sent = yield* Effect.mapError(sendCall(peer, value, o.form), fromA2a)
        const t = sent.verified.tally.value
        yield* Console.log(`task ${sent.task.id.slice(0, 12)}… ${sent.task.status.state}`)
        const code = t.err === null ? "" : ` (${t.err.code})`
        yield* Console.log(`tally ${t.st}${code}${t.st === "failed" ? ", a signed refusal" : ""}`)
        if (Option.isSome(sent.verified.res)) yield* Console.log(`result ${encodeCanonical(sent.verified.res.value, "utf16")}`)
        yield* Console.log("verdict: valid")
        if (Option.isSome(o.out)) {
          yield* writeJson(o.out.value, { tally: sent.verified.tally.json, ...(Option.isSome(sent.verified.res) ? { res: sent.verified.res.value } : {}) } as Json, o.force)
        }
      } else {
        const sent = yield* Effect.mapError(sendRevoke(peer, o.task, value), fromA2a)
        yield* Console.log(`task ${sent.task.id} ${sent.task.status.state}`)
        yield* Console.log(`ack from ${shortKey(sent.ack.value.iss)}: valid`)
      }
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
).pipe(Command.withDescription("Send a call (as an A2A message) or a revoke (in a CancelTask) to an A2A agent and verify the answer"))
