// The YEA conformance runner: checks this implementation against the published vector files
// (SPEC's `conformance/`), one outcome per case. `mandate yea conformance DIR` prints it.
//
// Vector files are read with JSON.parse, not the strict reader: they deliberately contain inputs
// with no canonical form (lone surrogates), which the code under test must refuse itself.
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Effect, Either, Option, Predicate } from "effect"
import { Signer } from "../kernel/services.js"
import { authorize } from "./authorize.js"
import type { CaveatContext, TotalsLookup } from "./caveat.js"
import { canonical } from "./canonical.js"
import { decodeConsentCode, encodeConsentCode } from "./consent.js"
import { decodeSeed, keyFromSeedText } from "./keys.js"
import { checkApprovalFile } from "./approval/conformance.js"
import { checkLensCase, checkPrintableCase } from "./lens/conformance.js"
import { decimal, formatQuantity, isQuantity, isUses, quantityValue, type Decimal } from "./measure.js"
import { signProof, verifyProof, type ProofSubject } from "./proof.js"
import { proposalHash } from "./proposal.js"
import { ConsentRequest } from "./reason.js"
import { isVerb, type Verb } from "./verb.js"
import { Schema } from "effect"

export interface CaseOutcome {
  readonly name: string
  /** Undefined when the case passed. */
  readonly failure?: string
}

export interface FileOutcome {
  readonly file: string
  /** Set when the file is not run at all (its cases count neither as passed nor as failed). */
  readonly skipped?: string
  readonly cases: ReadonlyArray<CaseOutcome>
}

/** The files the runner knows, in the order it runs them. */
export const CONFORMANCE_FILES = [
  "canonical.json",
  "hash.json",
  "keys.json",
  "proof.json",
  "printable.json",
  "lens.json",
  "uses.json",
  "grants.json",
  "approval.json"
] as const

const show = (v: unknown): string => (v === undefined ? "undefined" : JSON.stringify(v))
const nameOf = (c: unknown, i: number): string =>
  Predicate.isRecord(c) && typeof c.name === "string" ? c.name : `#${i}`

/** A Clock frozen at `seconds`: vectors fix "now". */
export const fixedClock = (seconds: number): Clock.Clock => {
  const ms = seconds * 1000
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => ms,
    currentTimeMillis: Effect.succeed(ms),
    unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    sleep: () => Effect.void
  }
}

const arrayCases = (
  json: unknown,
  check: (c: unknown, i: number) => Effect.Effect<string | undefined>,
  name: (c: unknown, i: number) => string = nameOf
): Effect.Effect<ReadonlyArray<CaseOutcome>> =>
  Array.isArray(json)
    ? Effect.forEach(json, (c, i) => Effect.map(check(c, i), (failure) => ({ name: name(c, i), failure })))
    : Effect.succeed([{ name: "(file)", failure: "expected an array of cases" }])

const sync = (f: () => string | undefined) => Effect.sync(f)

// ---------------------------------------------------------------------------------------------
// One checker per file

/** canonical.json: `{name, input, canonical}` or `{name, input, error: true}` (§10). */
const checkCanonical = (c: unknown) =>
  sync(() => {
    if (!Predicate.isRecord(c)) return "malformed case"
    const got = canonical(c.input)
    if (c.error === true) return Either.isLeft(got) ? undefined : `expected an error, got ${show(got.right)}`
    if (Either.isLeft(got)) return `expected ${show(c.canonical)}, got error ${got.left.message}`
    return got.right === c.canonical ? undefined : `expected ${show(c.canonical)}, got ${show(got.right)}`
  })

/** hash.json: `{name, proposal, hash}` (§5.1). */
const checkHash = (c: unknown) =>
  sync(() => {
    if (!Predicate.isRecord(c) || !Predicate.isRecord(c.proposal)) return "malformed case"
    const got = proposalHash(c.proposal)
    if (Either.isLeft(got)) return `no hash: ${got.left.message}`
    return got.right === c.hash ? undefined : `expected ${show(c.hash)}, got ${show(got.right)}`
  })

/** keys.json: `{seed, public}` or `{seed, valid: false}` (§6.1). */
const checkKey = (c: unknown) =>
  sync(() => {
    if (!Predicate.isRecord(c) || typeof c.seed !== "string") return "malformed case"
    const got = keyFromSeedText(c.seed)
    if (c.valid === false) return Option.isNone(got) ? undefined : `expected the seed to be refused, got ${got.value}`
    if (Option.isNone(got)) return "seed refused"
    return got.value === c.public ? undefined : `expected ${show(c.public)}, got ${show(got.value)}`
  })

const subjectFor = (verb: Verb, target: string): ProofSubject | undefined => {
  switch (verb) {
    case "COMMIT": return { verb, hash: target }
    case "UNDO": return { verb, receipt: target }
    case "ASK": return { verb, capability: target }
    case "INTENT": return { verb, capability: target }
    case "EXPAND": return { verb, handle: target }
    default: return undefined
  }
}

/**
 * proof.json: `{seed, aud, verb, target, ts, key, sig, valid?}` (§6.5). A valid case must derive
 * `key` from `seed`, sign to exactly `sig` (Ed25519 is deterministic) and verify; an invalid one
 * must be refused by verification.
 */
const checkProof = (c: unknown): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    if (!Predicate.isRecord(c) || typeof c.aud !== "string" || typeof c.target !== "string" || typeof c.ts !== "number" || !isVerb(c.verb)) {
      return "malformed case"
    }
    const subject = subjectFor(c.verb, c.target)
    if (subject === undefined) return `verb ${c.verb} has no proof target`
    const verified = yield* Effect.either(verifyProof({ key: c.key, ts: c.ts, sig: c.sig }, c.aud, subject))
    if (c.valid === false) return Either.isLeft(verified) ? undefined : "expected the proof to be refused, it verified"
    if (Either.isLeft(verified)) return `proof refused: ${verified.left.message}`
    const seed = decodeSeed(c.seed)
    if (Option.isNone(seed)) return "seed refused"
    const signed = yield* Effect.either(signProof(c.aud, subject).pipe(Effect.provideService(Signer, Signer.make(seed.value))))
    if (Either.isLeft(signed)) return `signing failed: ${signed.left.message}`
    if (signed.right.key !== c.key) return `expected key ${show(c.key)}, got ${show(signed.right.key)}`
    if (signed.right.sig !== c.sig) return `expected sig ${show(c.sig)}, got ${show(signed.right.sig)}`
    return undefined
  }).pipe(Effect.withClock(fixedClock(Predicate.isRecord(c) && typeof c.ts === "number" ? c.ts : 0)))

/** uses.json: `{quantities: [{quantity, lens}], wellFormed: [{name, uses, valid}]}` (§5.1, §9.2). */
const checkUses = (json: unknown): Effect.Effect<ReadonlyArray<CaseOutcome>> =>
  Effect.sync(() => {
    if (!Predicate.isRecord(json) || !Array.isArray(json.quantities) || !Array.isArray(json.wellFormed)) {
      return [{ name: "(file)", failure: "expected {quantities, wellFormed}" }]
    }
    const out: Array<CaseOutcome> = []
    json.quantities.forEach((c: unknown, i: number) => {
      const name = `quantities #${i}`
      if (!Predicate.isRecord(c)) return out.push({ name, failure: "malformed case" })
      if (!isQuantity(c.quantity)) return out.push({ name, failure: `quantity ${show(c.quantity)} refused` })
      const got = formatQuantity(c.quantity)
      out.push({ name: `${name} ${show(c.lens)}`, failure: got === c.lens ? undefined : `expected ${show(c.lens)}, got ${show(got)}` })
    })
    json.wellFormed.forEach((c: unknown, i: number) => {
      const name = `wellFormed ${nameOf(c, i)}`
      if (!Predicate.isRecord(c) || typeof c.valid !== "boolean") return out.push({ name, failure: "malformed case" })
      const got = isUses(c.uses)
      out.push({ name, failure: got === c.valid ? undefined : `expected valid=${c.valid}, got ${got}` })
    })
    return out
  })

/** Totals already committed or reserved, from a case's `used: {blockId: {of: quantity}}`. */
const usedFrom = (used: unknown): TotalsLookup => (blockId, of) =>
  Effect.sync((): Decimal => {
    const byBlock = Predicate.isRecord(used) && Predicate.isRecord(used[blockId]) ? (used[blockId] as Record<string, unknown>) : {}
    const q = Object.prototype.hasOwnProperty.call(byBlock, of) ? byBlock[of] : undefined
    return isQuantity(q) ? quantityValue(q) : decimal(0)
  })

/**
 * grants.json cases: `{name, token, trusted, proofKey, ctx, expect}` (§6.3–§6.6). The token is
 * presented as the request's only grant, with `proofKey` as the verified proof key, at `ctx.now`.
 */
const checkGrantCase = (c: unknown): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    if (!Predicate.isRecord(c) || !Predicate.isRecord(c.ctx) || !Predicate.isRecord(c.expect) || !Array.isArray(c.trusted) || typeof c.proofKey !== "string") {
      return "malformed case"
    }
    const ctx = c.ctx
    if (typeof ctx.service !== "string" || !isVerb(ctx.verb) || typeof ctx.capability !== "string" || typeof ctx.now !== "number") {
      return "malformed ctx"
    }
    const request: Omit<CaveatContext, "now"> = {
      service: ctx.service,
      verb: ctx.verb,
      capability: ctx.capability,
      ...(Predicate.isRecord(ctx.proposal) ? { proposal: { ...ctx.proposal, hash: String(ctx.proposal.hash) } } : {})
    }
    const result = yield* Effect.either(
      authorize({ grants: [c.token], proofKey: c.proofKey, trusted: c.trusted as ReadonlyArray<string>, request }, usedFrom(ctx.used)).pipe(
        Effect.withClock(fixedClock(ctx.now))
      )
    )
    const expect = c.expect
    if (expect.ok === true) return Either.isRight(result) ? undefined : `expected ok, got ${result.left.reason}: ${result.left.message}`
    if (Either.isRight(result)) return `expected ${show(expect.code)}, got ok`
    return result.left.reason === expect.code ? undefined : `expected ${show(expect.code)}, got ${result.left.reason}: ${result.left.message}`
  })

/** grants.json `consentCode`: `{consent, detail, agent, code}`: encoding gives `code`, decoding gives back the parts. */
const checkConsentCode = (v: unknown): string | undefined => {
  if (!Predicate.isRecord(v) || !Predicate.isRecord(v.detail) || typeof v.agent !== "string" || typeof v.code !== "string") return "malformed case"
  const consent = Schema.decodeUnknownOption(ConsentRequest)(v.consent)
  if (Option.isNone(consent)) return "malformed consent"
  const enc = encodeConsentCode({ consent: consent.value, detail: v.detail, agent: v.agent })
  if (Either.isLeft(enc)) return `encoding failed: ${enc.left.message}`
  if (enc.right !== v.code) return `expected ${show(v.code)}, got ${show(enc.right)}`
  const dec = decodeConsentCode(v.code)
  if (Either.isLeft(dec)) return `decoding failed: ${dec.left.message}`
  if (dec.right.agent !== v.agent || dec.right.consent.hash !== consent.value.hash) return "decoding lost a member"
  return undefined
}

const checkGrants = (json: unknown): Effect.Effect<ReadonlyArray<CaseOutcome>> =>
  Effect.gen(function* () {
    if (!Predicate.isRecord(json) || !Array.isArray(json.cases)) return [{ name: "(file)", failure: "expected {cases}" }]
    const out = [...(yield* arrayCases(json.cases, checkGrantCase))]
    if (json.consentCode !== undefined) out.push({ name: "consentCode", failure: checkConsentCode(json.consentCode) })
    return out
  })

/** Runs the checks of one file on its parsed content. */
export const checkFile = (file: string, json: unknown): Effect.Effect<FileOutcome> => {
  const run = (cases: Effect.Effect<ReadonlyArray<CaseOutcome>>) => Effect.map(cases, (cs) => ({ file, cases: cs }))
  switch (file) {
    case "canonical.json": return run(arrayCases(json, checkCanonical))
    case "hash.json": return run(arrayCases(json, checkHash))
    case "keys.json": return run(arrayCases(json, checkKey, (c, i) => `#${i} ${Predicate.isRecord(c) ? String(c.seed) : ""}`))
    case "proof.json": return run(arrayCases(json, checkProof, (c, i) => `#${i}${Predicate.isRecord(c) && c.valid === false ? " (invalid)" : ""}`))
    case "printable.json": return run(arrayCases(json, (c) => sync(() => checkPrintableCase(c))))
    case "lens.json": return run(arrayCases(json, (c) => sync(() => checkLensCase(c))))
    case "uses.json": return run(checkUses(json))
    case "grants.json": return run(checkGrants(json))
    case "approval.json": return run(checkApprovalFile(json))
    default: return Effect.succeed({ file, skipped: "unknown file", cases: [] })
  }
}

/** Runs every known conformance file present in `dir`, in `CONFORMANCE_FILES` order. */
export const runConformance = (dir: string): Effect.Effect<ReadonlyArray<FileOutcome>, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const out: Array<FileOutcome> = []
    for (const file of CONFORMANCE_FILES) {
      const path = `${dir.replace(/\/+$/, "")}/${file}`
      if (!(yield* fs.exists(path))) continue
      const text = yield* fs.readFileString(path)
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch (e) {
        out.push({ file, cases: [{ name: "(file)", failure: `not JSON: ${String(e)}` }] })
        continue
      }
      out.push(yield* checkFile(file, json))
    }
    return out
  })

export interface Summary {
  readonly passed: number
  readonly failed: number
  /** One line per failed case: `file: case: why`. */
  readonly failures: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<string>
}

export const summarize = (files: ReadonlyArray<FileOutcome>): Summary => {
  let passed = 0
  const failures: Array<string> = []
  const skipped: Array<string> = []
  for (const f of files) {
    if (f.skipped !== undefined) skipped.push(`${f.file}: skipped (${f.skipped})`)
    for (const c of f.cases) {
      if (c.failure === undefined) passed++
      else failures.push(`${f.file}: ${c.name}: ${c.failure}`)
    }
  }
  return { passed, failed: failures.length, failures, skipped }
}
