// The `mandate` command tree, declared without loading it. Each entry names a command, says what
// it does, and imports its module only when asked: a run loads the one group (and, inside a
// group, the one command) its arguments select, so `mandate writ verify` never loads YEA, the
// executor, the stores or the HTTP binding, and `mandate --help` loads no command at all. The
// commands not selected stand in as named stubs, which is all `--help` lists of them.
import * as Command from "@effect/cli/Command"
import type { Effect } from "effect"

// @effect/cli itself types a heterogeneous list of commands this way (`withSubcommands`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = Command.Command<any, any, any, any>

export interface Leaf {
  readonly name: string
  readonly description: string
  readonly load: () => Promise<AnyCommand>
}

export interface Group {
  readonly name: string
  readonly description: string
  readonly subcommands: ReadonlyArray<Leaf>
}

export type Entry = Leaf | Group

export const isGroup = (e: Entry): e is Group => "subcommands" in e

/** What `mandate` is, in the root help. */
export const ROOT_DESCRIPTION = "Authority, consent and spend control for AI agents"

/** Every command, in the order `--help` lists them. */
export const tree: ReadonlyArray<Entry> = [
  {
    name: "keygen",
    description: "Create an Ed25519 key file (mode 0600) and print its did:key",
    load: () => import("./keygen.js").then((m) => m.keygenCommand)
  },
  {
    name: "gateway",
    description: "Run the LLM spend gateway: OpenAI and Anthropic APIs with budgets on the reservation core (docs/gateway.md)",
    load: () => import("./gateway.js").then((m) => m.gatewayCommand)
  },
  {
    name: "writ",
    description: "Writ v0.1: writs, calls, tallies, revokes and acks",
    subcommands: [
      { name: "conformance", description: "Run every Writ v0.1 conformance vector in DIR (spec section 14)", load: () => import("./writ.js").then((m) => m.conformanceCommand) },
      { name: "issue", description: "Issue a root writ (section 2) to a holder; writes a chain file", load: () => import("./writ-issue.js").then((m) => m.writIssueCommand) },
      { name: "delegate", description: "Delegate a narrowed child of a writ you hold (sections 4, 7.5); writes the extended chain", load: () => import("./writ-delegate.js").then((m) => m.writDelegateCommand) },
      { name: "call", description: "Build and sign a call (section 5) under a chain file", load: () => import("./writ-call.js").then((m) => m.writCallCommand) },
      { name: "send", description: "POST a call or revoke to an executor (section 10) and verify the answer", load: () => import("./writ-send.js").then((m) => m.writSendCommand) },
      { name: "verify", description: "Verify any Writ object file (writ, chain, call, tally, revoke, ack): verdict and reason", load: () => import("./writ-verify.js").then((m) => m.writVerifyCommand) },
      { name: "revoke", description: "Sign a revoke (section 9.1) of a writ, or of every writ your key issued", load: () => import("./writ-revoke.js").then((m) => m.writRevokeCommand) },
      { name: "inspect", description: "Draw a tally tree: each hop's signer, op, st, used and check result", load: () => import("./writ-inspect.js").then((m) => m.writInspectCommand) },
      { name: "audit", description: "Read and filter an executor's audit record (section 9.3) from its SQLite store", load: () => import("./writ-audit.js").then((m) => m.writAuditCommand) },
      { name: "serve", description: "Run a Writ executor over HTTP (section 10) with the SQLite store and a handler module", load: () => import("./writ-serve.js").then((m) => m.writServeCommand) },
      { name: "mcp-echo", description: "A minimal MCP server under Writ (stdio) with one tool, echo, that runs only under a Writ call", load: () => import("./writ-mcp.js").then((m) => m.writMcpEchoCommand) },
      { name: "mcp-proxy", description: "An MCP proxy (stdio) that signs each tools/call under a grant and passes back only verified results", load: () => import("./writ-mcp.js").then((m) => m.writMcpProxyCommand) },
      { name: "mcp-gate", description: "Writ in front of a plain MCP server (stdio or Streamable HTTP): the gate enforces the grant and signs the tallies", load: () => import("./writ-mcp-gate.js").then((m) => m.writMcpGateCommand) },
      { name: "jws", description: "Wrap a Writ object as a compact JWS, or unwrap and verify one (Appendix D)", load: () => import("./writ-jws.js").then((m) => m.writJwsCommand) },
      { name: "approver", description: "Name the key that must approve a refused call (Appendix E): the issuer of the first writ that refuses it", load: () => import("./writ-approve.js").then((m) => m.writApproverCommand) },
      { name: "approve", description: "Sign the pinned approval writ, or re-issue your writ below it (Appendix E); writes the new chain", load: () => import("./writ-approve.js").then((m) => m.writApproveCommand) },
      { name: "gate", description: "Run writ gate: Writ in front of a plain HTTP API, from a mapping file (docs/writ-gate.md)", load: () => import("./writ-gate.js").then((m) => m.writGateCommand) },
      { name: "a2a-serve", description: "Run an A2A agent endpoint (A2A 1.0, 0.3 read) in front of a Writ executor and a handler module (docs/a2a.md)", load: () => import("./writ-a2a.js").then((m) => m.writA2aServeCommand) },
      { name: "a2a-send", description: "Send a call or a revoke to an A2A agent (docs/a2a.md) and verify the answer", load: () => import("./writ-a2a.js").then((m) => m.writA2aSendCommand) },
      { name: "files", description: "The file binding: run a folder's calls (executor), or check a tally beside its work", load: () => import("./writ-files.js").then((m) => m.writFilesCommand) },
      { name: "scenarios", description: "Run executor scenarios (Writ section 14.1) on the SQLite and memory stores", load: () => import("./writ-scenarios.js").then((m) => m.writScenariosCommand) }
    ]
  },
  {
    name: "yea",
    description: "YEA: keys, grants, consent, services, requests, Lens and the conformance runner",
    subcommands: [
      { name: "conformance", description: "Run the YEA conformance vectors in DIR", load: () => import("./yea.js").then((m) => m.yeaConformanceCommand) },
      { name: "init", description: "Create the agent key ($YEA_HOME, default ~/.yea) and the principal key ($YEA_PRINCIPAL_HOME), mode 0600", load: () => import("./yea-keys.js").then((m) => m.yeaInitCommand) },
      { name: "add", description: "Check a service with HELLO and add it to services.json (what `yea mcp` with no URL serves)", load: () => import("./yea-services.js").then((m) => m.yeaAddCommand) },
      { name: "remove", description: "Remove a service (by URL or id) from services.json", load: () => import("./yea-services.js").then((m) => m.yeaRemoveCommand) },
      { name: "services", description: "List the services in services.json", load: () => import("./yea-services.js").then((m) => m.yeaServicesCommand) },
      { name: "whoami", description: "Show this machine's agent key, whether the principal key is here, and the saved grants", load: () => import("./yea-whoami.js").then((m) => m.yeaWhoamiCommand) },
      { name: "grant", description: "Sign a grant (--svc --verbs --can --each --total --risk --exp --to) with the principal key", load: () => import("./yea-keys.js").then((m) => m.yeaGrantCommand) },
      { name: "install", description: "Add the bridge (yea mcp on the saved services) to an MCP client's config file (--config); creates the agent key", load: () => import("./yea-install.js").then((m) => m.yeaInstallCommand) },
      { name: "setup", description: "The same as install", load: () => import("./yea-install.js").then((m) => m.yeaSetupCommand) },
      { name: "uninstall", description: "Remove the bridge's entry from an MCP client's config file (--config); keys and grants stay", load: () => import("./yea-install.js").then((m) => m.yeaUninstallCommand) },
      { name: "service-id", description: "Print a service's id: from a server key file or a server's name (server/NAME.key in the YEA home), or from a running service's BRIEF", load: () => import("./yea-service-id.js").then((m) => m.yeaServiceIdCommand) },
      { name: "grant-import", description: "Save a grant issued to this agent on another device, after checking its chain, caveats and holder", load: () => import("./yea-grant-import.js").then((m) => m.yeaGrantImportCommand) },
      { name: "delegate", description: "Narrow a grant this agent holds for another key (--to, added caveats)", load: () => import("./yea-keys.js").then((m) => m.yeaDelegateCommand) },
      { name: "inspect", description: "Decode a pg1. grant, a pc1. consent code or a frame; Lens or --json", load: () => import("./yea-inspect.js").then((m) => m.yeaInspectCommand) },
      { name: "approve", description: "Review a pc1. consent code and sign a one-time consent (interactive terminal only)", load: () => import("./yea-approve.js").then((m) => m.yeaApproveCommand) },
      { name: "do", description: "Send one request (HELLO, ASK, INTENT, COMMIT, UNDO, EXPAND) to a service and print its Lens", load: () => import("./yea-do.js").then((m) => m.yeaDoCommand) },
      { name: "doctor", description: "Check keys, permissions, saved grants and services' reachability", load: () => import("./yea-doctor.js").then((m) => m.yeaDoctorCommand) },
      { name: "serve", description: "Serve an example service (calendar, shop) on yea://, the HTTP bridge or stdio", load: () => import("./yea-serve.js").then((m) => m.yeaServeCommand) },
      { name: "examples", description: "Serve the example calendar (--port) and shop (--port + 2) on yea:// until interrupted; no billing YEA service (billing is `yea mcp-example`)", load: () => import("./yea-examples.js").then((m) => m.yeaExamplesCommand) },
      { name: "test-drive", description: "A first run: the example shop on loopback, throwaway keys, and a HELLO, ASK, INTENT, COMMIT tour", load: () => import("./yea-test-drive.js").then((m) => m.yeaTestDriveCommand) },
      { name: "demo", description: "Run the whole YEA flow on TCP, stdio and the HTTP bridge; exit 1 on any failed check", load: () => import("./yea-demo.js").then((m) => m.yeaDemoCommand) },
      { name: "mcp", description: "Serve YEA services (any transport) to MCP clients on stdio: one tool per capability, plus yea_undo, yea_expand, yea_consent", load: () => import("./yea-mcp.js").then((m) => m.yeaMcpBridgeCommand) },
      { name: "openapi", description: "Serve a REST API (an OpenAPI document) as a YEA service: GETs as ask, writes as intent proposals showing the request", load: () => import("./yea-openapi.js").then((m) => m.yeaOpenapiCommand) },
      { name: "mcp-example", description: "Serve the example MCP server with job tools (typed approval, consent codes, undo) on stdio or Streamable HTTP", load: () => import("./yea-mcp.js").then((m) => m.yeaMcpExampleCommand) }
    ]
  },
  {
    name: "ledger",
    description: "The decision ledger: guarded actions, budgets, verification, replay",
    subcommands: [
      { name: "init", description: "Create a ledger in a SQLite file or PostgreSQL schema; --mode local_full or safe_telemetry", load: () => import("./ledger.js").then((m) => m.ledgerInitCommand) },
      { name: "record", description: "Append the events of a JSONL file (actions, outcomes, observations, protocol decisions)", load: () => import("./ledger.js").then((m) => m.ledgerRecordCommand) },
      { name: "stats", description: "Group the ledger by protocol, principal and reason, with a plain-language summary", load: () => import("./ledger.js").then((m) => m.ledgerStatsCommand) },
      { name: "export", description: "Export the lines (local_full, safe_telemetry) or --mode aggregate_export (groups under --min-group suppressed)", load: () => import("./ledger.js").then((m) => m.ledgerExportCommand) },
      { name: "verify", description: "Check every line's schema and hash chain against the head the store recorded", load: () => import("./ledger.js").then((m) => m.ledgerVerifyCommand) },
      { name: "replay", description: "What --policy P would have recommended for every recorded action, and the diff (not causal)", load: () => import("./ledger.js").then((m) => m.ledgerReplayCommand) },
      { name: "recover", description: "Settle the reservations a dead process left held: --owner OWNER and/or --expire-after SECONDS; --release gives them back", load: () => import("./ledger.js").then((m) => m.ledgerRecoverCommand) }
    ]
  },
  {
    name: "console",
    description: "Serve a read-only page on loopback: tally trees, the audit record, budgets and the ledger",
    load: () => import("./console.js").then((m) => m.consoleCommand)
  },
  {
    name: "demo",
    description: "Run the three-agent demo (A, B booking, C payment) over HTTP on loopback; writes out/",
    load: () => import("./demo.js").then((m) => m.demoCommand)
  }
]

/** The words of `args` that can name commands (options and their values are not looked at: a
 * word after an option may be its value, so only the leading words before any option count). */
export const commandWords = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const words: Array<string> = []
  for (const a of args) {
    if (a.startsWith("-")) break
    words.push(a)
  }
  return words
}

/** The command names `args` begin with (`writ verify` of `writ verify FILE --now 5`), as far as
 * they name commands in the tree. */
export const commandPath = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const path: Array<string> = []
  let level: ReadonlyArray<Entry> = tree
  for (const w of commandWords(args)) {
    const e = level.find((x) => x.name === w)
    if (e === undefined) break
    path.push(w)
    level = isGroup(e) ? e.subcommands : []
  }
  return path
}

const named = <C extends AnyCommand>(c: C, description: string): AnyCommand => Command.withDescription(c, description)

/** What every loaded command's handler runs inside (main.ts gives it back the real console). */
export type Around = (handler: Effect.Effect<void, unknown, unknown>) => Effect.Effect<void, unknown, unknown>

const build = async (entries: ReadonlyArray<Entry>, words: ReadonlyArray<string>, around: Around): Promise<Array<AnyCommand>> =>
  Promise.all(entries.map(async (e): Promise<AnyCommand> => {
    const chosen = words[0] === e.name
    if (!isGroup(e)) return named(chosen ? Command.transformHandler(await e.load(), around) : Command.make(e.name), e.description)
    const subs = await build(e.subcommands, chosen ? words.slice(1) : [], around)
    const group = chosen ? Command.withSubcommands(Command.make(e.name), subs as [AnyCommand, ...Array<AnyCommand>]) : Command.make(e.name)
    return named(group, e.description)
  }))

/** The `mandate` command with the commands `args` select loaded and the others as stubs. */
export const commandFor = async (args: ReadonlyArray<string>, around: Around): Promise<AnyCommand> =>
  Command.make("mandate").pipe(
    Command.withDescription(ROOT_DESCRIPTION),
    Command.withSubcommands((await build(tree, commandWords(args), around)) as [AnyCommand, ...Array<AnyCommand>])
  )
