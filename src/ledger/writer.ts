// Writing the ledger: each event body becomes one line, in the ledger's declared mode, chained to
// the line before it. The chain and the mode are decided here, once; a store (src/store/*/ledger.ts)
// only keeps lines, its head and the held reservations, through the LedgerBackend primitives.
import { Clock, Context, Effect, Option, Schema, type Stream } from "effect"
import { encodeCanonical, hashTextB64 } from "../kernel/index.js"
import type { StoreError } from "../accounting/store-error.js"
import { EventBody, type EventType, type LedgerMode, SCHEMA_VERSION } from "./events.js"
import type { Json } from "../kernel/json.js"
import { generalizeTime, heldPseudonyms, keyCheck, makeSanitizer, pseudonym, type TelemetryKey } from "./privacy.js"
import { ledgerError, type LedgerError } from "./reason.js"

/** The last line written: its sequence number and hash (seq -1 and hash null before the header). */
export interface Head {
  readonly seq: number
  readonly hash: string | null
}

/** A line ready to store, with what it means for the held-reservations index. */
export interface StoredLine {
  readonly seq: number
  readonly hash: string
  readonly line: string
  /** A reservation this line holds (reservation event): recovery settles it if never settled. */
  readonly hold?: HeldReservation & { readonly owner: string }
  /** A reservation this line settles. */
  readonly settle?: string
}

/**
 * A reservation a line holds, as the recovery after a crash needs it. In safe_telemetry the owner,
 * action and run are kept as the lines' pseudonyms (the reservation id is the guard's random one,
 * which the accounting store settles by).
 */
export interface HeldReservation {
  readonly id: string
  readonly action_id: string
  readonly run_id: string
}

export interface LedgerInfo {
  readonly ledger: string
  readonly mode: LedgerMode
  /**
   * The pseudonymization key (safe_telemetry). Given to `create` it is not stored by a store on disk
   * (only its `keyCheck`); read back from one it is set only by a ledger written before the key
   * moved out of the store (src/app/ledger-key.ts moves it out).
   */
  readonly key: TelemetryKey | undefined
  /** The store's check of the key (privacy.ts `keyCheck`), when it keeps one. */
  readonly keyCheck?: string | undefined
}

/**
 * Where a safe_telemetry ledger's key comes from: a key file or a provided secret, found by the
 * composition root (src/app/ledger-key.ts). None when nothing was found; never a fresh key.
 */
export interface LedgerKeyService {
  readonly key: Effect.Effect<Option.Option<TelemetryKey>, LedgerError>
}

export class LedgerKey extends Context.Tag("mandate/ledger/LedgerKey")<LedgerKey, LedgerKeyService>() {}

/** The key of a safe_telemetry ledger: the one provided (LedgerKey) or kept by the store, checked against the store's check. */
const resolveKey = (info: LedgerInfo) =>
  Effect.gen(function*() {
    const source = yield* Effect.serviceOption(LedgerKey)
    const provided = Option.isSome(source) ? Option.getOrUndefined(yield* source.value.key) : undefined
    const key = provided ?? info.key
    if (key === undefined) {
      return yield* ledgerError("key_missing", `ledger ${info.ledger} is safe_telemetry and its pseudonym key was not found (a key file beside the ledger, MANDATE_LEDGER_KEY or the key option); a new key is not made up, it would break the pseudonyms' stability`)
    }
    const mismatch = (info.keyCheck !== undefined && info.keyCheck !== "" && keyCheck(key) !== info.keyCheck) ||
      (info.key !== undefined && keyCheck(info.key) !== keyCheck(key))
    if (mismatch) return yield* ledgerError("key_mismatch", `the key given is not the one ledger ${info.ledger}'s pseudonyms were made with`)
    return key
  })

export interface LedgerBackend {
  /** The ledger's identity and mode, if it was created. */
  readonly info: Effect.Effect<Option.Option<LedgerInfo>, StoreError | LedgerError>
  /** Creates the ledger (header line included); `ledger_exists` if it already is. */
  readonly create: (info: LedgerInfo, header: StoredLine) => Effect.Effect<void, StoreError | LedgerError>
  /**
   * Appends the lines `build` makes from the current head, as one atomic step that holds the head
   * against every other writer (process) until it ends. Joins an enclosing Atomic transaction on SQL
   * stores, so a reserve and its ledger lines commit together.
   */
  readonly append: (build: (head: Head) => ReadonlyArray<StoredLine>) => Effect.Effect<void, StoreError | LedgerError>
  /** Every line in order (bounded by the reader). */
  readonly lines: Stream.Stream<string, StoreError | LedgerError>
  /** The head recorded by the store (verify compares the lines against it). */
  readonly head: Effect.Effect<Head, StoreError | LedgerError>
  /** Reservation ids held by `owner` and not yet settled. */
  readonly held: (owner: string) => Effect.Effect<ReadonlyArray<HeldReservation>, StoreError | LedgerError>
}

export class LedgerStore extends Context.Tag("mandate/ledger/LedgerStore")<LedgerStore, LedgerBackend>() {}

/** The hash a line is chained by: base64url SHA-256 of its UTF-8 bytes. */
export const lineHash = (line: string): string => hashTextB64(line)

// Each body is encoded by its own member of the union (the one its `type` names), which the union
// would pick anyway: the same checks, without the dispatch, on every line written.
const encoders = Object.fromEntries(EventBody.members.map((m) => [m.fields.type.literals[0], Schema.encodeSync(m as Schema.Schema<EventBody, unknown>)])) as {
  readonly [T in EventType]: (body: EventBody) => unknown
}
const encodeBody = (body: EventBody): unknown => (encoders[body.type] ?? Schema.encodeSync(EventBody))(body)

/** The canonical line for `body` after `head`. */
export const makeLine = (ledger: string, head: Head, at: string, body: EventBody): StoredLine => {
  const line = encodeCanonical({ v: SCHEMA_VERSION, ledger, seq: head.seq + 1, prev: head.hash, at, ...(encodeBody(body) as { [k: string]: Json }) } as Json, "utf16")
  return { seq: head.seq + 1, hash: lineHash(line), line }
}

export interface LedgerWriterService {
  readonly info: LedgerInfo
  /** Appends the bodies as consecutive lines (one atomic step). */
  readonly append: (bodies: ReadonlyArray<EventBody>) => Effect.Effect<void, StoreError | LedgerError>
  readonly held: (owner: string) => Effect.Effect<ReadonlyArray<HeldReservation>, StoreError | LedgerError>
  /**
   * The namespace as the accounting tables keep it in their limit keys: itself in local_full, its
   * pseudonym in safe_telemetry (a namespace is often a user's or tenant's name, and the limit
   * keys are stored beside the ledger). The same key gives the same pseudonym in every process, so
   * ledgers sharing a namespace still share their budgets.
   */
  readonly limitNamespace: (namespace: string) => string
}

export class LedgerWriter extends Context.Tag("mandate/ledger/LedgerWriter")<LedgerWriter, LedgerWriterService>() {}

const isoOf = (ms: number): string => new Date(ms).toISOString()

/** The writer over the LedgerStore in context (which must hold a created ledger). */
export const makeWriter: Effect.Effect<LedgerWriterService, StoreError | LedgerError, LedgerStore> = Effect.gen(function*() {
  const store = yield* LedgerStore
  const found = yield* store.info
  if (Option.isNone(found)) return yield* ledgerError("ledger_missing", "no ledger here: run `mandate ledger init` first")
  const key = found.value.mode === "safe_telemetry" ? yield* resolveKey(found.value) : undefined
  const info: LedgerInfo = { ...found.value, key }
  // Pseudonyms handed out by `held` (recovery writes them back into settlement lines as they are).
  const handedOut = new Set<string>()
  const sanitize = key !== undefined
    ? makeSanitizer(key, (domain, v) => handedOut.has(`${domain}\u0000${v}`))
    : (b: EventBody) => b
  // The held index keeps in each mode what the lines keep: raw ids in local_full, pseudonyms in safe_telemetry.
  const heldIds = key !== undefined ? heldPseudonyms(key) : (h: { owner: string; action_id: string; run_id: string }) => h
  const append = (bodies: ReadonlyArray<EventBody>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const exact = isoOf(now)
      const at = info.mode === "safe_telemetry" ? generalizeTime(exact) : exact
      return store.append((head) => {
        const out: Array<StoredLine> = []
        let h = head
        for (const b of bodies) {
          const l = makeLine(info.ledger, h, at, sanitize(b))
          const extra = b.type === "reservation" ? { hold: { id: b.reservation_id, ...heldIds(b) } } : b.type === "settlement" ? { settle: b.reservation_id } : {}
          out.push({ ...l, ...extra })
          h = l
        }
        return out
      })
    })
  const held = (owner: string) =>
    key === undefined ? store.held(owner) : Effect.tap(store.held(pseudonym(key, "owner", owner)), (hs) =>
      Effect.sync(() => {
        for (const h of hs) {
          handedOut.add(`id\u0000${h.action_id}`)
          handedOut.add(`run\u0000${h.run_id}`)
        }
      }))
  const limitNamespace = key === undefined ? (n: string) => n : (n: string) => pseudonym(key, "namespace", n)
  return { info, append, held, limitNamespace }
})

/** Creates a ledger on the LedgerStore in context: its header line declares the mode. */
export const createLedger = (info: LedgerInfo): Effect.Effect<void, StoreError | LedgerError, LedgerStore> =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const now = yield* Clock.currentTimeMillis
    const at = info.mode === "safe_telemetry" ? generalizeTime(isoOf(now)) : isoOf(now)
    yield* store.create(info, makeLine(info.ledger, { seq: -1, hash: null }, at, { type: "ledger", schema: "mandate.ledger", mode: info.mode }))
  })
