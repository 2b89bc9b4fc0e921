// `mandate writ audit STORE`: read an executor's audit record (spec section 9.3) from its SQLite
// store file and print the entries that match the filters, one line each (or JSON lines). The
// record is append-only and kept beside the protocol's stores; this command only reads it.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import * as SqliteWrit from "../store/sqlite/writ-stores.js"
import { type AuditEntry, AuditLog } from "../writ/executor/stores.js"
import { shortId, shortKey } from "./writ-check.js"
import { cliError, runCommand } from "./writ-io.js"

const store = Args.text({ name: "STORE" }).pipe(Args.withDescription("The executor's SQLite store file"))
const text = (name: string, description: string) => Options.text(name).pipe(Options.optional, Options.withDescription(description))
const options = {
  kind: Options.choice("kind", ["call", "revoke"]).pipe(Options.optional, Options.withDescription("Only calls or only revokes")),
  outcome: text("outcome", "Only this outcome: error, ok, failed, canceled, pending, inflight, recorded, unsaved"),
  reason: text("reason", "Only entries with this reason code"),
  op: text("op", "Only operations with this prefix (section 3.1 matching)"),
  principal: text("principal", "Only calls from, or revokes by, this did:key"),
  since: Options.integer("since").pipe(Options.optional, Options.withDescription("Only entries at or after this time")),
  until: Options.integer("until").pipe(Options.optional, Options.withDescription("Only entries before this time")),
  json: Options.boolean("json").pipe(Options.withDescription("Print each entry as one JSON line"))
}

const prefixMatches = (p: string, s: string): boolean => s === p || (p.endsWith("/") && s.startsWith(p)) || s.startsWith(p + "/")

export const auditFilter = (o: {
  readonly kind: Option.Option<string>
  readonly outcome: Option.Option<string>
  readonly reason: Option.Option<string>
  readonly op: Option.Option<string>
  readonly principal: Option.Option<string>
  readonly since: Option.Option<number>
  readonly until: Option.Option<number>
}) => (e: AuditEntry): boolean =>
  (Option.isNone(o.kind) || e.kind === o.kind.value) &&
  (Option.isNone(o.outcome) || e.outcome === o.outcome.value) &&
  (Option.isNone(o.reason) || e.reason === o.reason.value) &&
  (Option.isNone(o.op) || (e.op !== null && prefixMatches(o.op.value, e.op))) &&
  (Option.isNone(o.principal) || e.principal === o.principal.value) &&
  (Option.isNone(o.since) || e.time >= o.since.value) &&
  (Option.isNone(o.until) || e.time < o.until.value)

export const auditLine = (e: AuditEntry): string =>
  [
    String(e.time),
    e.kind.padEnd(6),
    (e.op ?? "-").padEnd(14),
    `${e.outcome}${e.reason ? ` (${e.reason})` : ""}`.padEnd(28),
    `from ${e.principal ? shortKey(e.principal) : "-"}`,
    `peer ${e.peer ?? "none"}`,
    e.identity ? `id ${shortId(e.identity)}` : `unparsed ${e.unparsed ?? "?"}`,
    e.signed ? `signed ${shortId(e.signed)}` : ""
  ].join("  ").trimEnd()

/** Every audit entry of a store file (which must exist: reading never creates a store). */
export const readAudit = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* Effect.orElseSucceed(fs.exists(file), () => false)
    if (!exists) return yield* Effect.fail(cliError("mandate/unreadable", "no such store file", file))
    return yield* Effect.flatMap(AuditLog, (log) => log.read).pipe(
      Effect.provide(SqliteWrit.layer(file)),
      Effect.mapError((e) => cliError("mandate/store_unavailable", e.message, file))
    )
  })

export const writAuditCommand = Command.make("audit", { store, ...options }, (o) =>
  runCommand(Effect.gen(function*() {
    const entries = (yield* readAudit(o.store)).filter(auditFilter(o))
    for (const e of entries) yield* Console.log(o.json ? JSON.stringify(e) : auditLine(e))
    if (!o.json) yield* Console.log(`${entries.length} entries`)
  }))
)
