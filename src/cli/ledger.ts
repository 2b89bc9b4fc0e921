// `mandate ledger init|record|stats|export|verify|replay`. WHERE is a SQLite file
// or postgres://...#schema (ledger-open.ts); `--ledger NAME` picks one ledger in the store. Every
// failure prints one line with its reason code and exits 1. Long exports and replays draw a progress
// bar on stderr when it is a terminal.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Chunk, Clock, Console, Effect, Layer, Option, Stream } from "effect"
import { parseJson } from "../kernel/index.js"
import {
  aggregate, boundedLines, checkOutcome, decodePolicySpec, EventBody, type HeldReservation, LedgerStore, LedgerWriter, ledgerError, type LedgerError,
  LedgerMode, readLedger, recoverHeld, replay, stats, toPolicy, verifyLedger
} from "../ledger/index.js"
import * as MemoryAtomic from "../store/memory/atomic.js"
import * as MemoryLedger from "../store/memory/ledger.js"
import * as MemoryReservations from "../store/memory/reservations.js"
import { initLedger, openLedger, openStores, parseLocation } from "./ledger-open.js"
import { stderrProgress } from "./ledger-progress.js"
import { Schema } from "effect"
import { CliIo } from "./io.js"
import { describeParseError, ledgerFailure } from "./ledger-failure.js"
import { CommandPath } from "./where.js"

const where = Args.text({ name: "WHERE" }).pipe(Args.withDescription("the ledger's store: a SQLite file, or postgres://...#schema"))
const ledgerName = Options.text("ledger").pipe(Options.withDefault("default"), Options.withDescription("the ledger's name in the store"))

/** One line on stderr, `error: <code> at <where>: <why>` (ledger-failure.ts); exit code 1. */
const fail = (e: unknown) =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const command = Option.getOrElse(yield* Effect.serviceOption(CommandPath), () => "mandate ledger")
    const f = ledgerFailure(e, command)
    yield* Effect.sync(() => {
      io.stderr.write(`error: ${f.reason} at ${f.where}: ${f.why}\n`)
      io.fail()
    })
  })

const run = <A, E, R>(eff: Effect.Effect<A, E, R>) => Effect.catchAll(Effect.asVoid(eff), fail)

/**
 * A command that reads a ledger refuses a SQLite path that does not exist before opening it:
 * opening would create an empty database file, so a typo would leave a stray file behind.
 */
const existing = (whereText: string) =>
  Effect.gen(function*() {
    const where = parseLocation(whereText)
    if (where.store === "sqlite" && !(yield* (yield* FileSystem.FileSystem).exists(where.file).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* ledgerError("ledger_missing", `no ledger file at ${where.file}: run \`mandate ledger init\` first`)
    }
    return where
  })

/** An input file that must exist (`file_missing` otherwise, one line). */
const inputFile = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists(path).pipe(Effect.orElseSucceed(() => false))).pipe(
    Effect.flatMap((ok) => (ok ? Effect.succeed(path) : Effect.fail(ledgerError("file_missing", `no file at ${path}`))))
  )

/** The first bytes of every SQLite database file. */
const SQLITE_MAGIC = "SQLite format 3\u0000"

/** Whether `path` is a file that is not a SQLite database: an exported JSONL ledger. */
const isExport = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(path).pipe(Effect.option)
    if (info._tag === "None" || info.value.type !== "File" || Number(info.value.size) === 0) return false
    const head = yield* Effect.scoped(Effect.flatMap(fs.open(path), (f) => {
      const buf = new Uint8Array(16)
      return Effect.map(f.read(buf), (n) => new TextDecoder().decode(buf.subarray(0, Number(n))))
    })).pipe(Effect.orElseSucceed(() => ""))
    return head !== SQLITE_MAGIC
  })

/** The lines of a JSONL file, in order, each bounded while it is read (chain.ts boundedLines). */
const fileLines = (fs: FileSystem.FileSystem, path: string) =>
  boundedLines(fs.stream(path)).pipe(
    Stream.filter((l) => l.trim().length > 0),
    Stream.mapError((e) => (e._tag === "LedgerError" ? e : ledgerError("invalid_event", e.message)))
  )

const initCommand = Command.make("init", {
  where, ledger: ledgerName,
  mode: Options.choice("mode", LedgerMode.literals).pipe(Options.withDefault("local_full" as const), Options.withDescription("declared once: local_full or safe_telemetry"))
}, (o) => run(Effect.gen(function*() {
  // safe_telemetry pseudonymizes identifiers with a key kept outside the store: MANDATE_LEDGER_KEY,
  // or the key file beside the ledger (created here, mode 0600, when there is none).
  yield* initLedger(parseLocation(o.where), { ledger: o.ledger, mode: o.mode })
  yield* Console.log(`created ledger ${o.ledger} (${o.mode}) in ${o.where}`)
})))

const MAX_RECORD_LINE = 256 * 1024

/** The members of a line's envelope: an imported line keeps its body, and is chained anew. */
const ENVELOPE = new Set(["v", "ledger", "seq", "prev", "at"])

const recordCommand = Command.make("record", {
  where, ledger: ledgerName,
  task: Options.text("task").pipe(Options.optional, Options.withDescription("the task this record is for: every outcome must name it (outcome_task_mismatch)")),
  events: Args.file({ name: "EVENTS" }).pipe(Args.withDescription("a JSONL file of event bodies (action, outcome, observation, protocol, ...), or a ledger exported by `mandate ledger export`"))
}, (o) => run(Effect.gen(function*() {
  const location = yield* existing(o.where)
  yield* inputFile(o.events)
  yield* Effect.provide(record(o), openLedger(location, { ledger: o.ledger }))
})))

const record = (o: { readonly events: string; readonly task: Option.Option<string> }) =>
  Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const writer = yield* LedgerWriter
  // An exported ledger (its first line is a header envelope) is verified whole before any of it is
  // recorded; its bodies are then appended after this ledger's head, chained anew.
  const first = yield* fileLines(fs, o.events).pipe(Stream.take(1), Stream.runCollect)
  const firstParsed = first.length === 0 ? undefined : parseJson(Chunk.unsafeGet(first, 0), { maxDepth: 32, integersOnly: false })
  const imported = firstParsed?._tag === "Right" && typeof firstParsed.right === "object" && firstParsed.right !== null && "seq" in firstParsed.right && "prev" in firstParsed.right
  if (imported) {
    const v = yield* verifyLedger(fileLines(fs, o.events))
    // Pseudonyms are not identifiers: a safe_telemetry export never enters a local_full ledger as if they were.
    if (v.mode !== writer.info.mode && v.mode === "safe_telemetry") {
      return yield* ledgerError("mode_mismatch", `the export is safe_telemetry; ledger ${writer.info.ledger} is ${writer.info.mode}`)
    }
  }
  const bar = yield* stderrProgress("record")
  let n = 0
  yield* fileLines(fs, o.events).pipe(
    Stream.runForEach((line) => Effect.gen(function*() {
      n++
      if (line.length > MAX_RECORD_LINE) return yield* ledgerError("line_too_long", `over ${MAX_RECORD_LINE} characters`, `line ${n}`)
      const parsed = parseJson(line, { maxDepth: 32, integersOnly: false })
      if (parsed._tag === "Left") return yield* ledgerError("invalid_event", parsed.left.message, `line ${n}`)
      const raw = imported && typeof parsed.right === "object" && parsed.right !== null
        ? Object.fromEntries(Object.entries(parsed.right).filter(([k]) => !ENVELOPE.has(k)))
        : parsed.right
      const body = yield* Effect.mapError(Schema.decodeUnknown(EventBody, { onExcessProperty: "error" })(raw), (e) => {
        const d = describeParseError(e)
        return ledgerError("invalid_event", d.why, d.path === "" ? `line ${n}` : `line ${n}, ${d.path}`)
      })
      // The export's own header is not recorded: this ledger has its own.
      if (body.type === "ledger" && imported) return
      if (body.type === "ledger") return yield* ledgerError("invalid_event", "a header is written by init only", `line ${n}`)
      // Seed "Outcome": the task identity must match the declared context.
      if (body.type === "outcome") {
        yield* checkOutcome(body.outcome, Option.isSome(o.task) ? { taskId: o.task.value } : {}).pipe(
          Effect.mapError((e) => ledgerError(e.reason, e.detail, `line ${n}: ${e.path ?? "outcome"}`))
        )
      }
      yield* writer.append([body])
      yield* bar.tick(n, 0)
    }))
  )
  yield* bar.done
  const count = imported ? n - 1 : n
  yield* Console.log(`recorded ${count} event${count === 1 ? "" : "s"}${imported ? " from an exported ledger (chain verified)" : ""}`)
})

/** The events of a ledger that exists (`ledger_missing` otherwise: an empty store is not an empty ledger). */
const events = Effect.gen(function*() {
  const s = yield* LedgerStore
  if (Option.isNone(yield* s.info)) return yield* ledgerError("ledger_missing", "no ledger here: run `mandate ledger init` first")
  return readLedger(s.lines)
})

const statsCommand = Command.make("stats", { where, ledger: ledgerName, json: Options.boolean("json").pipe(Options.withDescription("print the groups as JSON instead of a table and a summary")) }, (o) =>
  run(Effect.flatMap(existing(o.where), (location) => Effect.gen(function*() {
    const s = yield* stats(Stream.unwrap(events))
    if (o.json) return yield* Console.log(JSON.stringify(s))
    yield* Console.log(`${"protocol".padEnd(9)}${"principal".padEnd(30)}${"reason".padEnd(32)}${"count".padStart(7)}${"tokens".padStart(10)}${"usd".padStart(14)}`)
    for (const r of s.rows) {
      yield* Console.log(`${r.protocol.padEnd(9)}${r.principal.slice(0, 29).padEnd(30)}${r.reason.padEnd(32)}${String(r.count).padStart(7)}${String(r.tokens).padStart(10)}${r.usd.padStart(14)}`)
    }
    yield* Console.log("")
    yield* Console.log(s.summary)
  }).pipe(Effect.provide(openStores(location, { ledger: o.ledger }))))))

const exportCommand = Command.make("export", {
  where, ledger: ledgerName,
  mode: Options.choice("mode", ["local_full", "safe_telemetry", "aggregate_export"]).pipe(
    Options.withDefault("local_full" as const),
    Options.withDescription("what to export: the lines as recorded (local_full or safe_telemetry, the ledger's own mode) or aggregate_export (counts per group only)")
  ),
  minGroup: Options.integer("min-group").pipe(Options.withDefault(5), Options.withDescription("aggregate_export: smallest group shown (default 5)"))
}, (o) => run(Effect.flatMap(existing(o.where), (location) => Effect.gen(function*() {
  const store = yield* LedgerStore
  const info = yield* store.info
  if (Option.isNone(info)) return yield* ledgerError("ledger_missing", `no ledger ${o.ledger}`)
  const total = (yield* store.head).seq + 1
  const bar = yield* stderrProgress("export")
  let n = 0
  const counted = readLedger(store.lines).pipe(Stream.tap(() => bar.tick(++n, total)))
  if (o.mode === "aggregate_export") {
    const out = yield* aggregate(counted, o.minGroup)
    yield* bar.done
    return yield* Console.log(JSON.stringify(out))
  }
  // Lines leave as they were written and chained: the mode was declared at creation.
  if (o.mode !== info.value.mode) {
    return yield* ledgerError("mode_mismatch", `ledger ${o.ledger} was created ${info.value.mode}; its lines export only as ${info.value.mode} (or aggregate_export)`)
  }
  // Every line is checked against the chain before any leaves.
  yield* Stream.runDrain(counted)
  yield* bar.done
  const io = yield* CliIo
  yield* Stream.runForEach(store.lines, (l) => Effect.sync(() => void io.stdout.write(l + "\n")))
}).pipe(Effect.provide(openStores(location, { ledger: o.ledger }))))))

const verifyCommand = Command.make("verify", { where: Args.text({ name: "WHERE" }).pipe(Args.withDescription("the ledger's store (a SQLite file, or postgres://...#schema), or a JSONL file written by `mandate ledger export`")), ledger: ledgerName }, (o) =>
  run(Effect.gen(function*() {
    const location = yield* existing(o.where)
    if (location.store === "sqlite" && (yield* isExport(location.file))) {
      // An export carries no head of its store: its chain is checked line by line, from its header.
      const v = yield* verifyLedger(fileLines(yield* FileSystem.FileSystem, location.file))
      return yield* Console.log(`ok: export of ledger ${v.ledger} (${v.mode}), ${v.lines} lines, chain intact, head ${v.head.hash}`)
    }
    yield* Effect.gen(function*() {
      const store = yield* LedgerStore
      const info = yield* store.info
      const v = yield* verifyLedger(store.lines, yield* store.head, Option.isSome(info) ? info.value.mode : undefined)
      yield* Console.log(`ok: ledger ${v.ledger} (${v.mode}), ${v.lines} lines, chain intact, head ${v.head.hash}`)
    }).pipe(Effect.provide(openStores(location, { ledger: o.ledger })))
  })))

const memory = Layer.mergeAll(MemoryReservations.layerWithJournal, MemoryLedger.layer).pipe(Layer.provideMerge(MemoryAtomic.layer))

const replayCommand = Command.make("replay", {
  where, ledger: ledgerName,
  policy: Options.file("policy", { exists: "yes" }).pipe(Options.withDescription("a policy file: JSON {version: 1, namespace?, policies: [...]} (src/ledger/policy-spec.ts)"))
}, (o) => run(Effect.flatMap(existing(o.where), (location) => Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const text = yield* Effect.mapError(fs.readFileString(o.policy), (e) => ledgerError("invalid_policy", e.message))
  const parsed = parseJson(text, { maxDepth: 16, integersOnly: false })
  if (parsed._tag === "Left") return yield* ledgerError("invalid_policy", parsed.left.message)
  const spec = yield* decodePolicySpec(parsed.right)
  const bar = yield* stderrProgress("replay")
  const r = yield* replay(Stream.unwrap(events), toPolicy(spec), memory, bar.tick)
  yield* bar.done
  yield* Console.log(`${r.actions} recorded actions replayed under ${o.policy}: ${r.unchanged} decisions unchanged`)
  yield* Console.log(`  would deny ${r.newly_denied.count} that ran: ${r.newly_denied.tokens} tokens and $${r.newly_denied.usd} saved`)
  yield* Console.log(`  would allow ${r.newly_allowed.count} that were refused: ${r.newly_allowed.tokens} tokens and $${r.newly_allowed.usd} more, at their estimates`)
  for (const [reason, s] of Object.entries(r.by_reason)) yield* Console.log(`  ${reason}: ${s.count} changed, ${s.tokens} tokens, $${s.usd}`)
  yield* Console.log(r.note)
}).pipe(Effect.provide(openStores(location, { ledger: o.ledger }))))))

const recoverCommand = Command.make("recover", {
  where, ledger: ledgerName,
  owner: Options.text("owner").pipe(Options.optional, Options.withDescription("the dead process or worker whose held reservations to settle (the guard's `owner`)")),
  expireAfter: Options.integer("expire-after").pipe(Options.optional, Options.withDescription("seconds: settle every reservation held longer than this, whoever holds it")),
  release: Options.boolean("release").pipe(Options.withDescription("give everything back (you know the actions spent nothing); by default the estimates stay consumed"))
}, (o) => run(Effect.flatMap(existing(o.where), (location) => Effect.gen(function*() {
  if (Option.isNone(o.owner) && Option.isNone(o.expireAfter)) {
    return yield* ledgerError("invalid_argument", "say whose reservations to settle: --owner OWNER, --expire-after SECONDS, or both")
  }
  if (Option.isSome(o.expireAfter) && o.expireAfter.value < 0) return yield* ledgerError("invalid_argument", "--expire-after must not be negative")
  const writer = yield* LedgerWriter
  // Expiry reads the ledger's own lines (below); in safe_telemetry their reservation ids are
  // pseudonyms that name no reservation, so an expiry there would settle nothing: refuse it plainly.
  if (Option.isSome(o.expireAfter) && writer.info.mode === "safe_telemetry") {
    return yield* ledgerError("mode_mismatch", "--expire-after reads reservation ids from the lines, which are pseudonyms in safe_telemetry; recover by --owner")
  }
  // By owner: the store's index of held reservations (the owner is looked up by its pseudonym in
  // safe_telemetry).
  const owned = Option.isSome(o.owner) ? yield* writer.held(o.owner.value) : undefined
  if (owned !== undefined && Option.isNone(o.expireAfter)) {
    const n = yield* recoverHeld(owned, o.release ? "release" : "keep")
    return yield* Console.log(`recovered ${n} held reservation${n === 1 ? "" : "s"} (${o.release ? "released" : "estimates kept, dedup units given back"})`)
  }
  const byOwner = owned === undefined ? undefined : new Set(owned.map((h) => h.id))
  // Expiry reads the ledger itself: a reservation line with no settlement line after it is held,
  // since the time on its line. Line times are what the ledger recorded (in safe_telemetry, the hour,
  // and its ids are pseudonyms that name no reservation: there, recover by owner).
  const now = yield* Clock.currentTimeMillis
  const open = new Map<string, HeldReservation & { at: number }>()
  yield* Stream.runForEach(Stream.unwrap(events), (e) => Effect.sync(() => {
    if (e.type === "reservation") open.set(e.reservation_id, { id: e.reservation_id, action_id: e.action_id, run_id: e.run_id, at: Date.parse(e.at) })
    else if (e.type === "settlement") open.delete(e.reservation_id)
  }))
  const cutoff = Option.isSome(o.expireAfter) ? now - o.expireAfter.value * 1000 : undefined
  const held = [...open.values()].filter((h) => (byOwner === undefined || byOwner.has(h.id)) && (cutoff === undefined || h.at <= cutoff))
  const n = yield* recoverHeld(held, o.release ? "release" : "keep")
  yield* Console.log(`recovered ${n} held reservation${n === 1 ? "" : "s"} (${o.release ? "released" : "estimates kept, dedup units given back"})`)
}).pipe(Effect.provide(openLedger(location, { ledger: o.ledger }))))))

export const ledgerInitCommand = initCommand.pipe(Command.withDescription("Create a ledger; its mode (local_full or safe_telemetry) is declared once"))
export const ledgerRecordCommand = recordCommand
export const ledgerStatsCommand = statsCommand
export const ledgerExportCommand = exportCommand
export const ledgerVerifyCommand = verifyCommand
export const ledgerReplayCommand = replayCommand
export const ledgerRecoverCommand = recoverCommand
export type { LedgerError }
