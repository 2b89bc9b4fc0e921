// The application's own codes (`mandate/...`), as data: what a command or a server started by the
// application fails with when no protocol's table has a code for it (usage, files, keys, stores,
// listeners, processes). One literal union, defined here; a protocol's codes stay in its own union
// (Writ section 11 in writ/reason.ts, the executor's implementation codes in writ/executor/
// services.ts, the bindings' in writ/binding-reason.ts and each binding's errors, YEA's in
// yea/reason.ts) and are reused, never spelled again.
import { Schema } from "effect"
import { StartupRefused } from "../bind/mcp/context.js"
import type { FileReason } from "../bind/writ-file/errors.js"
import type { GateReason } from "../bind/writ-gate/errors.js"
import { AUDIT_SUPPRESSED, APPLICATION_ERROR, RATE_LIMITED, STORE_UNAVAILABLE } from "../writ/executor/services.js"

/** The codes the application names itself, each with what it means. */
export const OwnCode = Schema.Literal(
  /** The command line is wrong (a missing or unknown option or argument). */
  "mandate/usage",
  /** Something unexpected: a bug, reported without a stack trace. */
  "mandate/internal",
  /** A file or folder cannot be read, or is not what it should be (not a regular file). */
  "mandate/unreadable",
  /** A file or folder cannot be written. */
  "mandate/unwritable",
  /** The output file is there already (and --force was not given, or it is not a regular file). */
  "mandate/exists",
  /** A key path is a symbolic link, which is not followed. */
  "mandate/symlink",
  /** No key file where one is looked for. */
  "mandate/no_key",
  /** A key file or its folder that others may read or write. */
  "mandate/key_permissions",
  /** A key that is not one (a seed, a did:key). */
  "mandate/bad_key",
  /** A key file whose content is not a key. */
  "mandate/bad_key_file",
  /** A bearer token that is too short to be one. */
  "mandate/bad_token",
  /** A setting from the environment that is not valid (read through Config). */
  "mandate/bad_config",
  /** A limit option out of its range. */
  "mandate/bad_limit",
  /** A handler module that cannot be loaded or exports no application. */
  "mandate/bad_handler",
  /** A root that is not an Ed25519 did:key. */
  "mandate/bad_root",
  /** A URL that is not one this command can use. */
  "mandate/bad_url",
  /** TLS options that do not go together, or certificates that cannot be read. */
  "mandate/bad_tls",
  /** A ledger location that cannot be used. */
  "mandate/bad_ledger",
  /** A peer bindings file that is not one. */
  "mandate/bad_bindings",
  /** A tool's arguments that are not what it takes (the example echo tool's failed outcome). */
  "mandate/bad_arguments",
  /** A YEA service that does not answer as one. */
  "mandate/bad_service",
  /** An OpenAPI description that cannot be used. */
  "mandate/bad_spec",
  /** `yea openapi --preset NAME` names no preset the package ships (the error lists them). */
  "mandate/unknown_preset",
  /** A grants file that is not a JSON array of grant tokens. */
  "mandate/bad_grants_file",
  /** A services.json that is not a JSON array of {url, id, name}. */
  "mandate/bad_services_file",
  /** No saved service has this name, URL or id. */
  "mandate/unknown_service",
  /** An MCP client's configuration file that is not a JSON object (with an `mcpServers` object). */
  "mandate/bad_client_config",
  /** The person asked declined (or gave no answer): nothing was signed. */
  "mandate/declined",
  /** A command that needs an interactive terminal ran without one. */
  "mandate/not_interactive",
  /** A server that cannot be reached. */
  "mandate/unreachable",
  /** The MCP server behind the proxy failed (it would not start, exited, or answered an error). */
  "mandate/server",
  /** A transport that cannot be started. */
  "mandate/transport",
  /** The listener cannot be opened (the port, the host). */
  "mandate/listen",
  /** The decision ledger cannot be opened. */
  "mandate/ledger_unavailable",
  /** A process of the demo failed. */
  "mandate/demo_process",
  /** Some of `yea doctor`'s checks failed. */
  "mandate/doctor"
)

/** The executor's implementation codes (section 11, last paragraph), reused by the application. */
export const ExecutorOwnCode = Schema.Literal(STORE_UNAVAILABLE, APPLICATION_ERROR, RATE_LIMITED, AUDIT_SUPPRESSED)

/** The MCP example server's start-up refusals (src/bind/mcp/context.ts), namespaced. */
export const McpStartupCode = Schema.TemplateLiteral("mandate/", StartupRefused.fields.reason)

/** Every `mandate/...` code the application reports. */
export const AppCode = Schema.Union(OwnCode, ExecutorOwnCode, McpStartupCode)
export type AppCode = typeof AppCode.Type

/**
 * What a server started by the application fails with: an application code, or the refusal of
 * the binding it starts (a gate's mapping file, a files folder), under the binding's own code.
 */
export type ServeCode = AppCode | GateReason | FileReason
