// `mandate writ mcp-echo` and `mandate writ mcp-proxy` (docs/bindings.md). Both speak MCP on
// stdio, so stdout carries JSON-RPC only: log lines go to stderr, and a failure is the one line
// `error: <reason> at <where>: <why>` on stderr.
//
//   mcp-echo  --key K --root DID [--store FILE] [--optional]
//     a minimal MCP server under Writ with one tool, `echo`, that runs only under a Writ call
//     (`--optional` lets a call without one run unenforced, with no tally).
//   mcp-proxy --key K --grant CHAIN --receipts FILE [--pins FILE] [--closed] [--allow METHOD]...
//             [--listen HOST:PORT [--keys FILE]] (--http URL | -- SERVER ARGS...)
//     the proxy in front of the real server, started as a child or reached over Streamable HTTP
//     (--http, reconnected when it drops); with --listen served over Streamable HTTP, a server
//     connection per session.
//   mcp-proxy --print-pins -- SERVER ARGS...
//     lists the server's tools: each definition on stderr, to be read, and the pin file on stdout.
import { Args, Command, Options } from "@effect/cli"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Console, Effect, FiberRef, HashSet, Layer, Logger, Option, Schema } from "effect"
import { echoTool, serveMcp } from "../app/writ-mcp.js"
import type { ServeError } from "../app/inputs.js"
import { allowsBound } from "../bind/writ-mcp/methods.js"
import { PinFile, pinsOf } from "../bind/writ-mcp/policy.js"
import { runProxy } from "../bind/writ-mcp/proxy.js"
import { listenProxy } from "../app/writ-mcp-proxy.js"
import { Receipts } from "../bind/writ-mcp/receipts.js"
import { listAllTools, rawPeer, type RpcError } from "../bind/writ-mcp/rpc.js"
import { toolSet } from "../bind/writ-mcp/server.js"
import { publicKeyFromDidKey } from "../kernel/didkey.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { cliError, type CliError, opt, pretty, readBytes, readChainFile, readJson, readKeyFile, runCommand } from "./writ-io.js"
import { isLoopback, parseKeysFile, parseListen, type RemoteOptions } from "../bind/mcp/remote.js"
import { cliEnv } from "./io.js"
import { httpUpstream } from "./mcp-upstream.js"

/** Log lines on stderr only: stdout is the MCP stream. Every logger in place is replaced (the
 * runtime's pretty logger writes to stdout). */
export const onStderr = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, FiberRef.currentLoggers, HashSet.make(Logger.withConsoleError(Logger.logfmtLogger)))

export const fromServe = (e: ServeError): CliError => cliError(e.code, e.message, e.path)
export const fromRpc = (e: RpcError): CliError => cliError("mandate/server", e.message)

/** The client side on our own stdio: the client closing its input closes the transport. */
export const stdioToClient = (): StdioServerTransport => {
  const transport = new StdioServerTransport()
  process.stdin.once("end", () => void transport.close())
  return transport
}

/** The environment the child server inherits (it may need its own configuration). */
export const childEnv = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"))

export const writMcpEchoCommand = Command.make("mcp-echo", {
  key: Options.file("key", { exists: "yes" }).pipe(Options.withDescription("The server's key file (its tallies are signed with it)")),
  root: Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1); repeat for several")),
  store: Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file of the stores (default: memory, counts last as long as the process)")),
  optional: Options.boolean("optional").pipe(Options.withDescription("Also run calls that carry no Writ call, unenforced and with no tally"))
}, (o) =>
  runCommand(Effect.gen(function*() {
    for (const r of o.root) if (Option.isNone(publicKeyFromDidKey(r))) return yield* Effect.fail(cliError("bad_key", `not an Ed25519 did:key: ${r}`, "--root"))
    if (o.root.length === 0) return yield* Effect.fail(cliError("mandate/usage", "give at least one --root"))
    const seed = yield* readKeyFile(o.key)
    yield* Effect.scoped(serveMcp({
      seed,
      roots: o.root,
      tools: toolSet([echoTool]),
      require: !o.optional,
      transport: stdioToClient(),
      name: "mandate-writ-mcp-echo",
      ...(Option.isSome(o.store) ? { storeFile: o.store.value } : {})
    })).pipe(Effect.mapError(fromServe))
  }).pipe(onStderr))
)

export const readPins = (path: string) =>
  Effect.flatMap(readJson(path), ({ value }) =>
    Effect.mapError(Schema.decodeUnknown(PinFile)(value), () => cliError("malformed", "a pin file maps tool names to pins (strings)", path)))

/** An `--allow` naming a bound method would not open it (methods.ts): said at once, not ignored. */
export const checkAllow = (allow: ReadonlyArray<string>): Effect.Effect<void, CliError> => {
  const bound = allowsBound(allow)
  return bound.length === 0
    ? Effect.void
    : Effect.fail(cliError("mandate/usage", `${bound.join(", ")} is bound by the grant, not relayed unchecked: give the grant an act for it`, "--allow"))
}

/** `--listen HOST:PORT` and `--keys FILE` (docs/mcp-gate.md, "Serving remote clients"). */
export const listenOptions = {
  listen: Options.text("listen").pipe(Options.optional, Options.withDescription("Serve the client over Streamable HTTP at HOST:PORT (endpoint /mcp) instead of stdio; loopback unless --keys")),
  keys: Options.file("keys", { exists: "yes" }).pipe(Options.optional, Options.withDescription("With --listen: the bearer keys accepted, one SHA-256 (hex) per line; required off loopback"))
}

/** The listener's options from `--listen` and `--keys`; none when `--listen` is absent. */
export const remoteOf = (o: { readonly listen: Option.Option<string>; readonly keys: Option.Option<string> }) =>
  Effect.gen(function*() {
    if (Option.isNone(o.listen)) {
      if (Option.isSome(o.keys)) return yield* Effect.fail(cliError("mandate/usage", "--keys goes with --listen", "--keys"))
      return undefined
    }
    const at = yield* parseListen(o.listen.value).pipe(Effect.mapError((e) => cliError("mandate/usage", e.message, "--listen")))
    const keys = Option.isSome(o.keys)
      ? yield* Effect.flatMap(readBytes(o.keys.value), (b) => parseKeysFile(new TextDecoder().decode(b))).pipe(
        Effect.catchTag("InsecureListen", (e) => Effect.fail(cliError("mandate/usage", e.message, Option.getOrElse(o.keys, () => ""))))
      )
      : undefined
    if (keys === undefined && !isLoopback(at.host)) {
      return yield* Effect.fail(cliError("mandate/usage", `refusing to listen on ${at.host} without authentication: give --keys FILE, or listen on 127.0.0.1`, "--listen"))
    }
    const remote: RemoteOptions = { ...at, ...(keys === undefined ? {} : { keys }) }
    return remote
  })

export const writMcpProxyCommand = Command.make("mcp-proxy", {
  key: Options.file("key", { exists: "yes" }).pipe(Options.optional, Options.withDescription("The agent's key file: the grant's holder, who signs each call")),
  grant: Options.file("grant", { exists: "yes" }).pipe(Options.optional, Options.withDescription("The grant: a chain file from its root to the agent's key")),
  receipts: Options.text("receipts").pipe(Options.optional, Options.withDescription("JSON lines file where every verified tally is kept")),
  pins: Options.file("pins", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Pin file: list and call only the tool definitions approved there")),
  closed: Options.boolean("closed").pipe(Options.withDescription("Refuse arguments the grant has no application bound for (unbound_argument)")),
  allow: Options.text("allow").pipe(Options.repeated, Options.withDescription("Relay this method unchecked (e.g. logging/setLevel, completion/*); tools/call, resources/read and prompts/get are bound by the grant and cannot be allowed; others are refused method_refused")),
  printPins: Options.boolean("print-pins").pipe(Options.withDescription("List the server's tools (definitions on stderr) and print their pin file")),
  http: Options.text("http").pipe(Options.optional, Options.withDescription("The real server's Streamable HTTP endpoint, instead of a command after --; reconnected when it drops")),
  ...listenOptions,
  server: Args.text({ name: "SERVER" }).pipe(Args.repeated, Args.withDescription("After --: the real MCP server's command and arguments"))
}, (o) =>
  runCommand(Effect.gen(function*() {
    const [command, ...args] = o.server
    let newServer: () => Transport
    let reconnect: (() => Transport) | undefined
    const overHttp = yield* httpUpstream(o.http, command)
    if (overHttp !== undefined) {
      // A server that drops is reconnected by the next request (bind/writ-mcp/proxy-upstream.ts).
      newServer = overHttp
      reconnect = newServer
    } else {
      if (command === undefined) return yield* Effect.fail(cliError("mandate/usage", "give the server's command after -- (or --http URL)"))
      const env = childEnv(yield* cliEnv)
      newServer = () => new StdioClientTransport({ command, args, env, stderr: "inherit" })
    }
    const server = newServer()
    if (o.printPins) {
      const tools = yield* Effect.scoped(Effect.flatMap(rawPeer(server), (peer) => listAllTools(peer.request))).pipe(Effect.mapError(fromRpc))
      for (const t of tools) yield* Console.error(pretty(t))
      yield* Console.log(pretty(pinsOf(tools)).trimEnd())
      return
    }
    yield* checkAllow(o.allow)
    const key = opt(o.key)
    const grant = opt(o.grant)
    if (key === undefined || grant === undefined) return yield* Effect.fail(cliError("mandate/usage", "--key and --grant are required (or --print-pins)"))
    const seed = yield* readKeyFile(key)
    const chain = yield* readChainFile(grant)
    const pins = Option.isSome(o.pins) ? yield* readPins(o.pins.value) : undefined
    const receipts = Option.isSome(o.receipts) ? Receipts.file(o.receipts.value) : Receipts.none
    const remote = yield* remoteOf(o)
    const policy = { grant: chain, closed: o.closed, allow: o.allow, ...(pins === undefined ? {} : { pins }), ...(reconnect === undefined ? {} : { reconnect }) }
    const services = Layer.mergeAll(Signer.fromSeed(seed), RandomBytes.live, receipts)
    if (remote !== undefined) {
      // One proxy and one server per session (app/writ-mcp-proxy.ts), until the process is stopped.
      return yield* Effect.scoped(Effect.gen(function*() {
        const listener = yield* listenProxy({ ...policy, listen: remote, server: newServer, reconnect: reconnect !== undefined })
        yield* Effect.logInfo(`mcp-proxy: listening on ${listener.url} (a server started per session)`)
        return yield* Effect.never
      })).pipe(
        Effect.catchTag("ServeError", (e) => Effect.fail(fromServe(e))),
        Effect.provide(services)
      )
    }
    yield* Effect.scoped(runProxy({ ...policy, client: stdioToClient(), server })).pipe(
      Effect.catchTag("RpcError", (e) => Effect.fail(fromRpc(e))),
      Effect.provide(services)
    )
  }).pipe(onStderr))
)

