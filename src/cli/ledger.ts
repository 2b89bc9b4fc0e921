// `mandate ledger init|record|stats|export|verify|replay` (issue 9 item 10). WHERE is a SQLite file
// or postgres://...#schema (ledger-open.ts); `--ledger NAME` picks one ledger in the store. Every
// failure prints one line with its reason code and exits 1. Long exports and replays draw a progress
// bar on stderr when it is a terminal.
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Layer, Option, Stream } from "effect"
import { parseJson } from "../kernel/index.js"
import { RandomBytes } from "../kernel/index.js"
import {
  aggregate, checkOutcome, createLedger, decodePolicySpec, EventBody, LedgerStore, LedgerWriter, ledgerError, type LedgerError,
  LedgerMode, readLedger, replay, stats, toPolicy, verifyLedger
} from "../ledger/index.js"
import * as MemoryAtomic from "../store/memory/atomic.js"
import * as MemoryLedger from "../store/memory/ledger.js"
import * as MemoryReservations from "../store/memory/reservations.js"
import { openLedger, openStores, parseLocation } from "./ledger-open.js"
import { stderrProgress } from "./ledger-progress.js"
import { Schema } from "effect"
import { CliIo } from "./io.js"

const where = Args.text({ name: "WHERE" }).pipe(Args.withDescription("the ledger's store: a SQLite file, or postgres://...#schema"))
const ledgerName = Options.text("ledger").pipe(Options.withDefault("default"), Options.withDescription("the ledger's name in the store"))

/** One line on stderr, the reason first; exit code 1. */
const fail = (e: { readonly _tag: string; readonly message?: string }) =>
  Effect.flatMap(CliIo, (io) =>
    Effect.sync(() => {
      const r = e as { reason?: string; detail?: string; path?: string; message?: string }
      // One line, whatever the detail holds (a Schema's parse error spans several).
      const why = (r.detail ?? r.message ?? "").replace(/\s*\n\s*/g, " ")
      io.stderr.write(`error: ${r.reason ?? e._tag}${r.path ? ` at ${r.path}` : ""}: ${why}\n`)
      io.fail()
    }))

const run = <A, E extends { readonly _tag: string }, R>(eff: Effect.Effect<A, E, R>) => Effect.catchAll(Effect.asVoid(eff), fail)

const initCommand = Command.make("init", {
  where, ledger: ledgerName,
  mode: Options.choice("mode", LedgerMode.literals).pipe(Options.withDefault("local_full" as const), Options.withDescription("declared once: local_full or safe_telemetry"))
}, (o) => run(Effect.gen(function*() {
  // safe_telemetry pseudonymizes identifiers with a local key, created here and kept in the store.
  const key = o.mode === "safe_telemetry" ? yield* Effect.flatMap(RandomBytes, (r) => r.bytes(32)) : undefined
  yield* createLedger({ ledger: o.ledger, mode: o.mode, key })
  yield* Console.log(`created ledger ${o.ledger} (${o.mode}) in ${o.where}`)
}).pipe(Effect.provide(Layer.merge(openStores(parseLocation(o.where), { ledger: o.ledger }), RandomBytes.live)))))

const MAX_RECORD_LINE = 256 * 1024

const recordCommand = Command.make("record", {
  where, ledger: ledgerName,
  task: Options.text("task").pipe(Options.optional, Options.withDescription("the task this record is for: every outcome must name it (outcome_task_mismatch)")),
  events: Args.file({ name: "EVENTS", exists: "yes" }).pipe(Args.withDescription("a JSONL file of event bodies (action, outcome, observation, protocol, ...)"))
}, (o) => run(Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const writer = yield* LedgerWriter
  const bar = yield* stderrProgress("record")
  let n = 0
  yield* fs.stream(o.events).pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.filter((l) => l.trim().length > 0),
    Stream.runForEach((line) => Effect.gen(function*() {
      n++
      if (line.length > MAX_RECORD_LINE) return yield* ledgerError("line_too_long", `over ${MAX_RECORD_LINE} characters`, `line ${n}`)
      const parsed = parseJson(line, { maxDepth: 32, integersOnly: false })
      if (parsed._tag === "Left") return yield* ledgerError("invalid_event", parsed.left.message, `line ${n}`)
      const body = yield* Effect.mapError(Schema.decodeUnknown(EventBody, { onExcessProperty: "error" })(parsed.right), (e) => ledgerError("invalid_event", e.message.slice(0, 300), `line ${n}`))
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
  yield* Console.log(`recorded ${n} event${n === 1 ? "" : "s"}`)
}).pipe(Effect.provide(openLedger(parseLocation(o.where), { ledger: o.ledger })))))

/** The events of a ledger that exists (`ledger_missing` otherwise: an empty store is not an empty ledger). */
const events = Effect.gen(function*() {
  const s = yield* LedgerStore
  if (Option.isNone(yield* s.info)) return yield* ledgerError("ledger_missing", "no ledger here: run `mandate ledger init` first")
  return readLedger(s.lines)
})

const statsCommand = Command.make("stats", { where, ledger: ledgerName, json: Options.boolean("json") }, (o) =>
  run(Effect.gen(function*() {
    const s = yield* stats(Stream.unwrap(events))
    if (o.json) return yield* Console.log(JSON.stringify(s))
    yield* Console.log(`${"protocol".padEnd(9)}${"principal".padEnd(30)}${"reason".padEnd(32)}${"count".padStart(7)}${"tokens".padStart(10)}${"usd".padStart(14)}`)
    for (const r of s.rows) {
      yield* Console.log(`${r.protocol.padEnd(9)}${r.principal.slice(0, 29).padEnd(30)}${r.reason.padEnd(32)}${String(r.count).padStart(7)}${String(r.tokens).padStart(10)}${r.usd.padStart(14)}`)
    }
    yield* Console.log("")
    yield* Console.log(s.summary)
  }).pipe(Effect.provide(openStores(parseLocation(o.where), { ledger: o.ledger })))))

const exportCommand = Command.make("export", {
  where, ledger: ledgerName,
  mode: Options.choice("mode", ["local_full", "safe_telemetry", "aggregate_export"]).pipe(Options.withDefault("local_full" as const)),
  minGroup: Options.integer("min-group").pipe(Options.withDefault(5), Options.withDescription("aggregate_export: smallest group shown (default 5)"))
}, (o) => run(Effect.gen(function*() {
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
}).pipe(Effect.provide(openStores(parseLocation(o.where), { ledger: o.ledger })))))

const verifyCommand = Command.make("verify", { where, ledger: ledgerName }, (o) =>
  run(Effect.gen(function*() {
    const store = yield* LedgerStore
    const v = yield* verifyLedger(store.lines, yield* store.head)
    yield* Console.log(`ok: ledger ${v.ledger} (${v.mode}), ${v.lines} lines, chain intact, head ${v.head.hash}`)
  }).pipe(Effect.provide(openStores(parseLocation(o.where), { ledger: o.ledger })))))

const memory = Layer.mergeAll(MemoryReservations.layerWithJournal, MemoryLedger.layer).pipe(Layer.provideMerge(MemoryAtomic.layer))

const replayCommand = Command.make("replay", {
  where, ledger: ledgerName,
  policy: Options.file("policy", { exists: "yes" }).pipe(Options.withDescription("a policy file: JSON {version: 1, namespace?, policies: [...]} (src/ledger/policy-spec.ts)"))
}, (o) => run(Effect.gen(function*() {
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
}).pipe(Effect.provide(openStores(parseLocation(o.where), { ledger: o.ledger })))))

export const ledgerInitCommand = initCommand.pipe(Command.withDescription("Create a ledger; its mode (local_full or safe_telemetry) is declared once"))
export const ledgerRecordCommand = recordCommand
export const ledgerStatsCommand = statsCommand
export const ledgerExportCommand = exportCommand
export const ledgerVerifyCommand = verifyCommand
export const ledgerReplayCommand = replayCommand
export type { LedgerError }
