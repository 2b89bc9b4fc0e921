// `mandate writ mcp-gate` (docs/mcp-gate.md): Writ in front of a plain MCP server, speaking MCP on
// stdio toward the client, so stdout carries JSON-RPC only (log lines on stderr; a failure is the
// one line `error: <reason> at <where>: <why>` on stderr).
//
//   mcp-gate --key K --root DID [--store FILE] [--pins FILE] [--closed] [--allow METHOD]...
//            [--max-result-bytes N] [--timeout S] [--listen HOST:PORT [--keys FILE]] (--http URL | -- SERVER ARGS...)
//   mcp-gate --print-pins (--http URL | -- SERVER ARGS...)
import { Args, Command, Options } from "@effect/cli"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Console, Effect, Option } from "effect"
import { startMcpGate } from "../app/writ-mcp-gate.js"
import { pinsOf } from "../bind/writ-mcp/policy.js"
import { listAllTools, rawPeer } from "../bind/writ-mcp/rpc.js"
import { cliError, opt, pretty, readKeyFile, runCommand } from "./writ-io.js"
import { cliEnv } from "./io.js"
import { httpUpstream } from "./mcp-upstream.js"
import { checkAllow, childEnv, fromRpc, fromServe, listenOptions, onStderr, readPins, remoteOf, stdioToClient } from "./writ-mcp.js"

export const writMcpGateCommand = Command.make("mcp-gate", {
  key: Options.file("key", { exists: "yes" }).pipe(Options.optional, Options.withDescription("The gate's key file (mandate keygen; mode 0600): it signs every tally")),
  root: Options.text("root").pipe(Options.repeated, Options.withDescription("A root did:key to act under (section 7.1); repeat for several")),
  store: Options.text("store").pipe(Options.optional, Options.withDescription("SQLite file of every store (absent: memory, lost on restart)")),
  pins: Options.file("pins", { exists: "yes" }).pipe(Options.optional, Options.withDescription("Pin file (--print-pins): list and run only the tool definitions approved there")),
  closed: Options.boolean("closed").pipe(Options.withDescription("Refuse arguments the grant has no application bound for (unbound_argument)")),
  allow: Options.text("allow").pipe(Options.repeated, Options.withDescription("Relay this method unchecked (e.g. logging/setLevel, completion/*); tools/call, resources/read and prompts/get are bound by the grant and cannot be allowed; others are refused method_refused")),
  maxResultBytes: Options.integer("max-result-bytes").pipe(Options.optional, Options.withDescription("Largest tool result kept and returned (default 4 MiB); past it, mcp-gate/result_too_large")),
  timeout: Options.integer("timeout").pipe(Options.withDefault(60), Options.withDescription("Seconds a tool may go without answering or reporting progress; then unknown_outcome")),
  http: Options.text("http").pipe(Options.optional, Options.withDescription("The server's Streamable HTTP endpoint, instead of a command after --")),
  printPins: Options.boolean("print-pins").pipe(Options.withDescription("List the server's tools (definitions on stderr) and print their pin file")),
  ...listenOptions,
  server: Args.text({ name: "SERVER" }).pipe(Args.repeated, Args.withDescription("After --: the MCP server's command and arguments"))
}, (o) =>
  runCommand(Effect.gen(function*() {
    const [command, ...args] = o.server
    let upstream: Transport
    let restart: (() => Transport) | undefined
    let reconnect = false
    const overHttp = yield* httpUpstream(o.http, command)
    if (overHttp !== undefined) {
      // A server that drops is reconnected by the next call (bind/writ-mcp-gate/restart.ts).
      restart = overHttp
      reconnect = true
      upstream = restart()
    } else {
      if (command === undefined) return yield* Effect.fail(cliError("mandate/usage", "give the server's command after -- (or --http URL)"))
      const env = childEnv(yield* cliEnv)
      // A stdio server that exits is started again for the next call (bind/writ-mcp-gate/restart.ts).
      restart = () => new StdioClientTransport({ command, args, env, stderr: "inherit" })
      upstream = restart()
    }
    if (o.printPins) {
      const tools = yield* Effect.scoped(Effect.flatMap(rawPeer(upstream), (peer) => listAllTools(peer.request))).pipe(Effect.mapError(fromRpc))
      for (const t of tools) yield* Console.error(pretty(t))
      yield* Console.log(pretty(pinsOf(tools)).trimEnd())
      return
    }
    yield* checkAllow(o.allow)
    const key = opt(o.key)
    if (key === undefined) return yield* Effect.fail(cliError("mandate/usage", "--key is required (or --print-pins)"))
    const seed = yield* readKeyFile(key)
    const pins = Option.isSome(o.pins) ? yield* readPins(o.pins.value) : undefined
    if (o.timeout < 1) return yield* Effect.fail(cliError("mandate/usage", "at least 1 second", "--timeout"))
    const remote = yield* remoteOf(o)
    yield* Effect.scoped(Effect.gen(function*() {
      const gate = yield* startMcpGate({
        seed,
        roots: o.root,
        client: remote === undefined ? stdioToClient() : { listen: remote },
        upstream,
        ...(restart === undefined ? {} : { restart }),
        reconnectOnError: reconnect,
        closed: o.closed,
        allow: o.allow,
        timeout: `${o.timeout} seconds`,
        ...(Option.isSome(o.store) ? { storeFile: o.store.value } : {}),
        ...(Option.isSome(o.maxResultBytes) ? { maxResultBytes: o.maxResultBytes.value } : {}),
        ...(pins === undefined ? {} : { pins })
      })
      yield* Effect.logInfo(`mcp-gate ${gate.did}: ${Option.isSome(o.store) ? "durable" : "memory stores (lost on restart)"}, ${gate.resolved} pending resolved${gate.url === undefined ? "" : `, listening on ${gate.url}`}`)
      yield* gate.closed
    })).pipe(Effect.mapError(fromServe))
  }).pipe(onStderr))
)
