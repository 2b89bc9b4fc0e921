// What the bridge remembers between calls (SPEC-bridge "How a job tool call runs", "Start-up
// limits"): pending proposals, keyed by tool and input hash, and the consents handed back with
// `yea_consent`, by proposal hash. In memory (one process), or in `consents/` in the YEA home so a
// restarted bridge (a client restarts its MCP servers freely) still commits what the person
// approved: consents at `consents/<proposal hash>`, pending entries at
// `consents/pending/<sha256 of the key>.json`. Both are bounded (MAX_PENDING entries, oldest
// dropped first). A pending entry read back is re-checked (each proposal decoded and re-hashed,
// SPEC §5.1): a file that fails is dropped, never acted on. A consent read back is re-verified
// by the bridge before use, as one handed in is. File failures are `BridgeMemoryError`; the call
// then answers with it and nothing is committed.
import { FileSystem } from "@effect/platform"
import { createHash } from "node:crypto"
import { Data, Effect, Either, Option, Ref, Schema } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import { decodeProposal, type Proposal } from "../../yea/proposal.js"

export const MAX_PENDING = 256

export interface PendingEntry {
  /** The service id the proposals came from. */
  readonly service: string
  readonly proposals: ReadonlyArray<Proposal>
}

export class BridgeMemoryError extends Data.TaggedError("BridgeMemoryError")<{ readonly reason: "consents_unavailable"; readonly message: string }> {}

export interface BridgeMemory {
  readonly getPending: (key: string) => Effect.Effect<PendingEntry | undefined, BridgeMemoryError>
  readonly setPending: (key: string, entry: PendingEntry) => Effect.Effect<void, BridgeMemoryError>
  readonly deletePending: (key: string) => Effect.Effect<void, BridgeMemoryError>
  readonly allPending: Effect.Effect<ReadonlyArray<PendingEntry>, BridgeMemoryError>
  readonly getConsent: (hash: string) => Effect.Effect<string | undefined, BridgeMemoryError>
  readonly putConsent: (hash: string, token: string) => Effect.Effect<void, BridgeMemoryError>
  readonly deleteConsent: (hash: string) => Effect.Effect<void, BridgeMemoryError>
}

/** One process's memory: lost when the bridge exits. */
export const memoryBridgeMemory: Effect.Effect<BridgeMemory> = Effect.gen(function* () {
  const pending = yield* Ref.make(new Map<string, PendingEntry>())
  const consents = yield* Ref.make(new Map<string, string>())
  return {
    getPending: (key) => Effect.map(Ref.get(pending), (m) => m.get(key)),
    setPending: (key, entry) =>
      Ref.update(pending, (m) => {
        const next = new Map(m)
        next.delete(key)
        if (next.size >= MAX_PENDING) next.delete(next.keys().next().value as string)
        return next.set(key, entry)
      }),
    deletePending: (key) => Ref.update(pending, (m) => { const next = new Map(m); next.delete(key); return next }),
    allPending: Effect.map(Ref.get(pending), (m) => [...m.values()]),
    getConsent: (hash) => Effect.map(Ref.get(consents), (m) => m.get(hash)),
    putConsent: (hash, token) => Ref.update(consents, (m) => new Map(m).set(hash, token)),
    deleteConsent: (hash) => Ref.update(consents, (m) => { const next = new Map(m); next.delete(hash); return next })
  }
})

const HASH = /^[A-Za-z0-9_-]{1,128}$/
const Stored = Schema.parseJson(Schema.Struct({ service: Schema.String, seq: Schema.Number, proposals: Schema.Array(Schema.Unknown) }))

/** The memory in `dir` (the home's `consents/`), created 0700; files 0600, written whole and renamed. */
export const fileBridgeMemory = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const random = yield* RandomBytes
    const fail = (what: string) => (e: { readonly message: string }) => new BridgeMemoryError({ reason: "consents_unavailable", message: `${what}: ${e.message}` })
    const pendingDir = `${dir}/pending`
    yield* Effect.mapError(fs.makeDirectory(pendingDir, { recursive: true, mode: 0o700 }), fail(pendingDir))
    const fileOf = (key: string) => `${pendingDir}/${createHash("sha256").update(key).digest("base64url")}.json`
    const readIf = (path: string) =>
      fs.readFileString(path).pipe(
        Effect.map(Option.some),
        Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed(Option.none<string>())),
        Effect.mapError(fail(path))
      )
    const write = (path: string, text: string) =>
      Effect.gen(function* () {
        const tmp = `${path}.${encodeBase64url(yield* random.bytes(9))}.tmp`
        yield* fs.writeFileString(tmp, text, { flag: "wx", mode: 0o600 })
        yield* fs.rename(tmp, path)
      }).pipe(Effect.mapError(fail(path)))
    const remove = (path: string) => fs.remove(path).pipe(Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.void), Effect.mapError(fail(path)))
    /** A stored entry, its proposals re-checked; a file that fails is dropped. */
    const load = (path: string) =>
      Effect.gen(function* () {
        const text = yield* readIf(path)
        if (Option.isNone(text)) return undefined
        const stored = Schema.decodeEither(Stored)(text.value)
        const proposals = Either.isRight(stored) ? stored.right.proposals.map(decodeProposal) : []
        if (Either.isLeft(stored) || !proposals.every(Either.isRight)) {
          yield* remove(path)
          return undefined
        }
        return { service: stored.right.service, seq: stored.right.seq, proposals: proposals.map((p) => (p as Either.Right<never, Proposal>).right) }
      })
    const entries = Effect.gen(function* () {
      const names = yield* Effect.mapError(fs.readDirectory(pendingDir), fail(pendingDir))
      const loaded = yield* Effect.forEach(names.filter((n) => n.endsWith(".json")), (n) => Effect.map(load(`${pendingDir}/${n}`), (e) => (e === undefined ? [] : [{ ...e, path: `${pendingDir}/${n}` }])))
      return loaded.flat().sort((a, b) => a.seq - b.seq)
    })
    const consentPath = (hash: string) => (HASH.test(hash) ? Effect.succeed(`${dir}/${hash}`) : Effect.fail(new BridgeMemoryError({ reason: "consents_unavailable", message: "not a proposal hash" })))
    const memory: BridgeMemory = {
      getPending: (key) => Effect.map(load(fileOf(key)), (e) => (e === undefined ? undefined : { service: e.service, proposals: e.proposals })),
      setPending: (key, entry) =>
        Effect.gen(function* () {
          const all = yield* entries
          const others = all.filter((e) => e.path !== fileOf(key))
          for (const old of others.slice(0, Math.max(0, others.length - (MAX_PENDING - 1)))) yield* remove(old.path)
          const seq = all.reduce((n, e) => Math.max(n, e.seq), 0) + 1
          yield* write(fileOf(key), JSON.stringify({ service: entry.service, seq, proposals: entry.proposals }))
        }),
      deletePending: (key) => remove(fileOf(key)),
      allPending: Effect.map(entries, (all) => all.map((e) => ({ service: e.service, proposals: e.proposals }))),
      getConsent: (hash) => Effect.flatMap(consentPath(hash), (p) => Effect.map(readIf(p), (t) => Option.getOrUndefined(Option.map(t, (s) => s.trim())))),
      putConsent: (hash, token) => Effect.flatMap(consentPath(hash), (p) => write(p, token + "\n")),
      deleteConsent: (hash) => Effect.flatMap(consentPath(hash), remove)
    }
    return memory
  })
