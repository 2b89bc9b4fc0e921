// Reading a ledger back (beyond the seed: each line carries the hash of the
// previous one, so `mandate ledger verify` finds truncation or tampering). Every reader goes
// through `readLedger`, which checks as it streams: the line's size, strict JSON, the Schema of its
// version, seq consecutive from the header at 0, `prev` equal to the previous line's hash, and one
// ledger id throughout. A store that records its head (SQLite, PostgreSQL) also lets `verify` find
// lines cut from the end. The seed's caveat stands: this is append-only at the application level,
// tamper-evident against a reader that holds the head, not tamper-proof against a writer.
import { Effect, Either, Stream } from "effect"
import { parseJson } from "../kernel/index.js"
import { decodeEvent, type LedgerEvent, SCHEMA_VERSION } from "./events.js"
import { ledgerError, type LedgerError } from "./reason.js"
import { type Head, lineHash } from "./writer.js"

/** Longest line a reader accepts (bytes of UTF-16 text, a bound before parsing). */
export const MAX_LINE = 256 * 1024

/**
 * Longest line, in UTF-8 bytes, the byte reader holds before refusing it: a UTF-16 unit takes at
 * most 3 bytes, so every line within MAX_LINE fits, and the text check above still applies.
 */
export const MAX_LINE_BYTES = 3 * MAX_LINE

/**
 * The lines of a byte stream (a JSONL file), split on `\n` (a `\r` before it dropped), each bounded
 * as it is read: a line that grows past `maxBytes` is refused `line_too_long` as soon as it does,
 * so a one-line file of any size never holds more than `maxBytes` of it (plus the chunk in hand).
 */
export const boundedLines = <E>(bytes: Stream.Stream<Uint8Array, E>, maxBytes: number = MAX_LINE_BYTES): Stream.Stream<string, E | LedgerError> =>
  Stream.suspend(() => {
    let pending: Array<Uint8Array> = []
    let size = 0
    let n = 0
    const decoder = new TextDecoder()
    const tooLong = () => ledgerError("line_too_long", `longer than ${maxBytes} bytes`, `line ${n + 1}`)
    const take = (last: Uint8Array): string => {
      let whole = last
      if (pending.length > 0) {
        whole = new Uint8Array(size + last.length)
        let at = 0
        for (const p of [...pending, last]) {
          whole.set(p, at)
          at += p.length
        }
      }
      pending = []
      size = 0
      n++
      const text = decoder.decode(whole)
      return text.endsWith("\r") ? text.slice(0, -1) : text
    }
    const split = (chunk: Uint8Array): Effect.Effect<Array<string>, LedgerError> => {
      const out: Array<string> = []
      let start = 0
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
        if (size + i - start > maxBytes) return Effect.fail(tooLong())
        out.push(take(chunk.subarray(start, i)))
        start = i + 1
      }
      if (size + chunk.length - start > maxBytes) return Effect.fail(tooLong())
      if (start < chunk.length) {
        pending.push(chunk.subarray(start))
        size += chunk.length - start
      }
      return Effect.succeed(out)
    }
    const rest = Stream.suspend(() => (size > 0 ? Stream.make(take(new Uint8Array(0))) : Stream.empty))
    return Stream.concat(Stream.mapConcatEffect(bytes, split), rest)
  })

interface ChainState {
  readonly head: Head
  readonly ledger: string | undefined
}

const check = (state: ChainState, line: string, n: number): Effect.Effect<readonly [ChainState, readonly [LedgerEvent, string]], LedgerError> =>
  Effect.gen(function*() {
    const at = `line ${n + 1}`
    if (line.length > MAX_LINE) return yield* ledgerError("line_too_long", `longer than ${MAX_LINE} characters`, at)
    const parsed = parseJson(line, { maxDepth: 32, integersOnly: false })
    if (Either.isLeft(parsed)) return yield* ledgerError("invalid_event", parsed.left.message, at)
    const v = (parsed.right as { v?: unknown }).v
    if (v !== SCHEMA_VERSION) return yield* ledgerError("unsupported_version", `schema version ${JSON.stringify(v)}; this reader knows ${SCHEMA_VERSION}`, at)
    const event = yield* Effect.mapError(decodeEvent(parsed.right), (e) => ledgerError("invalid_event", e.message.slice(0, 300), at))
    if (event.seq !== state.head.seq + 1) return yield* ledgerError("sequence_gap", `seq ${event.seq} after ${state.head.seq}`, at)
    if (event.prev !== state.head.hash) return yield* ledgerError("chain_broken", `prev ${event.prev} is not the hash of the line before (${state.head.hash})`, at)
    if (event.seq === 0 && event.type !== "ledger") return yield* ledgerError("invalid_event", "the first line must be the ledger header", at)
    if (state.ledger !== undefined && event.ledger !== state.ledger) return yield* ledgerError("chain_broken", `ledger id ${event.ledger} in ledger ${state.ledger}`, at)
    const hash = lineHash(line)
    return [{ head: { seq: event.seq, hash }, ledger: event.ledger }, [event, hash] as const] as const
  })

const readChecked = <E>(lines: Stream.Stream<string, E>): Stream.Stream<readonly [LedgerEvent, string], E | LedgerError> =>
  lines.pipe(
    Stream.zipWithIndex,
    Stream.mapAccumEffect({ head: { seq: -1, hash: null }, ledger: undefined } as ChainState, (state, [line, n]) => check(state, line, n))
  )

/** The ledger's events, each checked against the chain before it is passed on. */
export const readLedger = <E>(lines: Stream.Stream<string, E>): Stream.Stream<LedgerEvent, E | LedgerError> =>
  Stream.map(readChecked(lines), ([e]) => e)

export interface Verified {
  readonly lines: number
  readonly head: Head
  readonly ledger: string
  readonly mode: string
}

/**
 * Checks every line, then the end against `recorded` (the store's head) when there is one:
 * fewer lines than the store recorded is truncation (`head_mismatch`); and the mode the store
 * declares (`declaredMode`) against the header line's, which the chain covers (`mode_mismatch`):
 * the store's copy is what the writer pseudonymizes by, so an edit of it alone must not pass.
 */
export const verifyLedger = <E>(lines: Stream.Stream<string, E>, recorded?: Head, declaredMode?: string): Effect.Effect<Verified, E | LedgerError> =>
  Effect.gen(function*() {
    let count = 0
    let head: Head = { seq: -1, hash: null }
    let ledger = ""
    let mode = ""
    yield* Stream.runForEach(readChecked(lines), ([e, hash]) =>
      Effect.sync(() => {
        count++
        head = { seq: e.seq, hash }
        ledger = e.ledger
        if (e.type === "ledger") mode = e.mode
      }))
    if (count === 0) return yield* ledgerError("ledger_missing", "empty ledger: no header line")
    if (recorded !== undefined && (recorded.seq !== head.seq || recorded.hash !== head.hash)) {
      return yield* ledgerError("head_mismatch", `the store recorded line ${recorded.seq + 1} (${recorded.hash}) as the last; the ledger ends at line ${head.seq + 1} (${head.hash})`)
    }
    if (declaredMode !== undefined && declaredMode !== mode) {
      return yield* ledgerError("mode_mismatch", `the store declares mode ${declaredMode}; the ledger's header line says ${mode}`)
    }
    return { lines: count, head, ledger, mode }
  }).pipe(Effect.withSpan("ledger.verify"))
