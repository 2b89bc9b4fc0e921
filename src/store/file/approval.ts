// The approval store (SPEC-approval §8 `FileStore`) in a folder: `$YEA_STORE`, else `store/` in
// the YEA home, the store a local stdio server shares with `mandate yea approve` (which writes
// consents into it). Paths and contents are the pure functions of file-layout.ts.
//
// Each one-time marker (consumed nonce, undo claim) is a file created with O_EXCL (`wx`): the
// first process to create it wins, whatever else shares the folder. Every other write goes to a
// temp file renamed into place, so a reader never sees half a file. The spend ledger's
// read-then-write steps (reserve, settle, release) run under one lock file, also created `wx`
// (and, within this process, one at a time);
// a lock still held after LOCK_TRIES is a store failure, and every caller fails closed on it.
// The folder is created 0700 and every file 0600: it holds totals, markers and receipts the agent
// must not rewrite (security.md, "Keep the agent away from the server's store too").
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Option, Schedule, Schema } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import {
  ApprovalStore,
  type ApprovalStoreError,
  JobReceipt,
  storeUnavailable,
  type ApprovalStoreShape
} from "../../yea/approval/index.js"
import type { Draw } from "../../yea/approval/policy.js"
import {
  consentFile,
  consumedContent,
  consumedFile,
  ledgerContent,
  ledgerFile,
  readLedger,
  receiptFile,
  UNDO_CLAIM_CONTENT,
  UNDO_DONE_CONTENT,
  undoClaimFile,
  undoDoneFile,
  type LedgerEntry
} from "../../yea/approval/file-layout.js"

const ReceiptJson = Schema.parseJson(JobReceipt)
const LOCK = "ledger.lock"
const LOCK_TRIES = 200
const RESERVATIONS = "reservations"

const why = (op: string) => (e: unknown) =>
  storeUnavailable(`file approval store: ${op}: ${e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)}`)

/** The store in `dir` (created 0700 if missing). */
export const makeFileApprovalStore = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const random = yield* RandomBytes
    const at = (rel: string) => `${dir}/${rel}`
    const parentOf = (rel: string) => at(rel).slice(0, at(rel).lastIndexOf("/"))
    yield* Effect.mapError(fs.makeDirectory(dir, { recursive: true, mode: 0o700 }), why("create the folder"))

    /** Creates `rel` holding `content` only if it does not exist: true when this call created it. */
    const createOnce = (rel: string, content: string) =>
      Effect.gen(function* () {
        yield* fs.makeDirectory(parentOf(rel), { recursive: true, mode: 0o700 })
        return yield* fs.writeFileString(at(rel), content, { flag: "wx", mode: 0o600 }).pipe(
          Effect.as(true),
          Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(false))
        )
      })

    /** Writes `rel` whole: a temp file renamed over it. */
    const replace = (rel: string, content: string) =>
      Effect.gen(function* () {
        yield* fs.makeDirectory(parentOf(rel), { recursive: true, mode: 0o700 })
        const tmp = `${at(rel)}.${encodeBase64url(yield* random.bytes(9))}.tmp`
        yield* fs.writeFileString(tmp, content, { flag: "wx", mode: 0o600 })
        yield* fs.rename(tmp, at(rel))
      })

    /** The text of `rel`, none when it does not exist. */
    const readIf = (rel: string) =>
      fs.readFileString(at(rel)).pipe(
        Effect.map(Option.some),
        Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed(Option.none<string>()))
      )

    const exists = (rel: string) => Effect.map(readIf(rel), Option.isSome)

    const ledger = (block: string, of: string) =>
      Effect.gen(function* () {
        const text = yield* readIf(ledgerFile(block, of))
        if (Option.isNone(text)) return { settled: 0n, reserved: {} } as LedgerEntry
        const entry = readLedger(text.value)
        if (entry === undefined) return yield* Effect.fail(storeUnavailable(`file approval store: ${ledgerFile(block, of)} is malformed`))
        return entry
      })
    const usedOf = (e: LedgerEntry) => Object.values(e.reserved).reduce((n, v) => n + v, e.settled)

    // Calls in this process queue on a semaphore; the lock file is for other processes, whose
    // hold is short (a few small files), so waiting on it is a bounded retry.
    const mutex = yield* Effect.makeSemaphore(1)

    /** Runs `eff` holding the ledger lock (a `wx` file), released whatever happens. */
    const locked = <A, E, R>(eff: Effect.Effect<A, E, R>) =>
      mutex.withPermits(1)(Effect.acquireUseRelease(
        createOnce(LOCK, "").pipe(
          Effect.flatMap((got) => (got ? Effect.void : Effect.fail("held" as const))),
          Effect.retry({ schedule: Schedule.spaced("10 millis"), times: LOCK_TRIES, while: (e) => e === "held" }),
          Effect.mapError((e) => (e === "held" ? storeUnavailable("file approval store: the ledger lock is held (a stale ledger.lock can be removed when no server runs)") : why("lock")(e)))
        ),
        () => eff,
        () => Effect.ignore(fs.remove(at(LOCK)))
      ))

    const reservationFile = (id: string) => `${RESERVATIONS}/${id}.json`
    const DrawKeys = Schema.parseJson(Schema.Array(Schema.Struct({ block: Schema.String, of: Schema.String })))

    const store: ApprovalStoreShape = {
      kind: "file",
      consumeOnce: (nonce, exp) => Effect.mapError(createOnce(consumedFile(nonce), consumedContent(exp)), why("consumeOnce")),
      putReceipt: (r) => Effect.flatMap(Schema.encode(ReceiptJson)(r), (json) => replace(receiptFile(r.id), json)).pipe(Effect.mapError(why("putReceipt"))),
      getReceipt: (id) =>
        Effect.gen(function* () {
          const text = yield* readIf(receiptFile(id))
          if (Option.isNone(text)) return Option.none<JobReceipt>()
          return Option.some(yield* Schema.decode(ReceiptJson)(text.value))
        }).pipe(Effect.mapError(why("getReceipt"))),
      claimUndo: (id) => Effect.mapError(createOnce(undoClaimFile(id), UNDO_CLAIM_CONTENT), why("claimUndo")),
      markUndone: (id) => Effect.mapError(replace(undoDoneFile(id), UNDO_DONE_CONTENT), why("markUndone")),
      isUndone: (id) => Effect.map(Effect.all([exists(undoDoneFile(id)), exists(undoClaimFile(id))]), ([d, c]) => d || c).pipe(Effect.mapError(why("isUndone"))),
      putConsent: (h, g) => Effect.mapError(replace(consentFile(h), g), why("putConsent")),
      getConsent: (h) => Effect.map(readIf(consentFile(h)), Option.map((t) => t.trim())).pipe(Effect.mapError(why("getConsent"))),
      used: (block, of) => Effect.map(ledger(block, of), usedOf).pipe(Effect.mapError(why("used"))),
      reserve: (draws: ReadonlyArray<Draw>) =>
        locked(
          Effect.gen(function* () {
            const entries = yield* Effect.forEach(draws, (d) => ledger(d.key.block, d.key.of))
            for (let i = 0; i < draws.length; i++) if (usedOf(entries[i]) + draws[i].amount > draws[i].max) return Option.none<string>()
            const id = "f" + encodeBase64url(yield* random.bytes(12))
            // The reservation's keys first, so settle and release find every file it touched.
            yield* replace(reservationFile(id), yield* Schema.encode(DrawKeys)(draws.map((d) => d.key)))
            for (let i = 0; i < draws.length; i++) {
              const e = entries[i]
              yield* replace(ledgerFile(draws[i].key.block, draws[i].key.of), ledgerContent({ settled: e.settled, reserved: { ...e.reserved, [id]: (e.reserved[id] ?? 0n) + draws[i].amount } }))
            }
            return Option.some(id)
          })
        ).pipe(Effect.mapError(why("reserve"))),
      settle: (id) => finish(id, true),
      release: (id) => finish(id, false)
    }

    /** Moves a reservation into `settled` (settle) or drops it (release), then forgets it. */
    const finish = (id: string, settle: boolean) =>
      locked(
        Effect.gen(function* () {
          if (!/^f[A-Za-z0-9_-]{16}$/.test(id)) return
          const text = yield* readIf(reservationFile(id))
          if (Option.isNone(text)) return
          const keys = yield* Schema.decode(DrawKeys)(text.value)
          for (const k of keys) {
            const e = yield* ledger(k.block, k.of)
            const amount = e.reserved[id]
            if (amount === undefined) continue
            const { [id]: _, ...rest } = e.reserved
            yield* replace(ledgerFile(k.block, k.of), ledgerContent({ settled: settle ? e.settled + amount : e.settled, reserved: rest }))
          }
          yield* fs.remove(at(reservationFile(id)))
        })
      ).pipe(Effect.mapError(why(settle ? "settle" : "release")))

    // A key that can't name a file (file-layout.ts throws on it) is a store failure, not a crash.
    const guarded = Object.fromEntries(
      Object.entries(store).map(([op, f]) => [
        op,
        typeof f === "function"
          ? (...args: Array<unknown>) =>
              Effect.suspend(() => (f as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args)).pipe(Effect.catchAllDefect((d) => Effect.fail(why(op)(d))))
          : f
      ])
    // Object.fromEntries loses the store's per-operation signatures; each entry is the same
    // operation wrapped so a defect becomes the operation's typed failure, so the shape still holds.
    ) as unknown as ApprovalStoreShape
    return guarded
  })

/** The approval store in the folder `dir`. */
export const fileApprovalLayer = (dir: string): Layer.Layer<ApprovalStore, ApprovalStoreError, FileSystem.FileSystem | RandomBytes> =>
  Layer.effect(ApprovalStore, makeFileApprovalStore(dir))
