// The checks of conformance/approval.json, one per section of the file (SPEC-approval "Testing"):
// plan hashes, decisions and their reason text, phrases, forms, state checks, judged answers,
// tightening, undo, consents, the approval code and the file layout. Called by the YEA runner
// (../conformance.ts); each returns the failure text of a case, or undefined when it passed.
import { Effect, Either, Option, Predicate, Schema } from "effect"
import { canonical } from "../canonical.js"
import { isQuantity, quantityValue } from "../measure.js"
import { checkJobConsent, jobConsentCode, decodeJobConsentCode } from "./consent.js"
import {
  consentFile,
  consumedContent,
  consumedFile,
  ledgerContent,
  ledgerFile,
  UNDO_CLAIM_CONTENT,
  UNDO_DONE_CONTENT,
  undoClaimFile,
  undoDoneFile
} from "./file-layout.js"
import { buildForm } from "./form.js"
import { judgeAnswer, type Answer } from "./judge.js"
import { effectivePhrase, phraseMatches } from "./phrase.js"
import { HashedPlan, hashPlan, PlanSpec } from "./plan.js"
import { decide, toLedgerUnits, type PolicyView } from "./policy.js"
import { JobReceipt } from "./receipt.js"
import { checkState, RequestState } from "./state.js"
import { ApprovalStore, makeMemoryApprovalStore } from "./store.js"
import { readTightening, type Tightening } from "./tighten.js"
import { undoJob } from "./undo.js"

export interface ApprovalCase {
  readonly name: string
  readonly failure?: string
}

const show = (v: unknown): string => (v === undefined ? "undefined" : JSON.stringify(v))
/** Deep equality as canonical JSON (member order is not part of any expectation). */
const same = (a: unknown, b: unknown): boolean => {
  const x = canonical(a)
  const y = canonical(b)
  return Either.isRight(x) && Either.isRight(y) && x.right === y.right
}
const expectSame = (got: unknown, want: unknown): string | undefined => (same(got, want) ? undefined : `expected ${show(want)}, got ${show(got)}`)

const plansOf = (v: unknown): ReadonlyArray<HashedPlan> | undefined => Option.getOrUndefined(Schema.decodeUnknownOption(Schema.Array(HashedPlan))(v))
const tighteningOf = (v: unknown): Tightening | undefined =>
  Predicate.isRecord(v) && Array.isArray(v.deny) && (v.outOfBand === "low" || v.outOfBand === "medium" || v.outOfBand === "high")
    ? { deny: v.deny as ReadonlyArray<string>, outOfBand: v.outOfBand }
    : undefined
const phrasesOf = (v: unknown): Readonly<Record<string, string>> => (Predicate.isRecord(v) ? (v as Record<string, string>) : {})

/** The outcome of an Effect that fails with a tagged approval error, as `{kind, ...}`. */
const outcome = <A, R>(eff: Effect.Effect<A, { readonly code: string; readonly why: string; readonly round?: number; readonly plan?: string }, R>, ok: (a: A) => unknown) =>
  Effect.match(eff, {
    onSuccess: ok,
    onFailure: (e) => ({ kind: e.code, why: e.why, ...(e.round !== undefined ? { round: e.round } : {}), ...(e.plan !== undefined ? { plan: e.plan } : {}) })
  })

const checkHash = (c: Record<string, unknown>) =>
  Effect.gen(function* () {
    const tool = c.tool as { name: string; risk?: "low" | "medium" | "high"; revert?: boolean }
    const plan = Schema.decodeUnknownOption(PlanSpec)(c.plan)
    if (Option.isNone(plan)) return "malformed plan"
    const got = yield* Effect.either(hashPlan(tool, c.input, plan.value))
    if (c.error === true) return Either.isLeft(got) ? undefined : `expected an error, got ${got.right.planHash}`
    if (Either.isLeft(got)) return `no hash: ${got.left.why}`
    return expectSame({ planHash: got.right.planHash, risk: got.right.risk, undoable: got.right.undoable }, { planHash: c.planHash, risk: c.risk, undoable: c.undoable })
  })

const usedLookup = (used: unknown) => (_block: string, of: string) =>
  Effect.sync(() => {
    const q = Predicate.isRecord(used) ? used[of] : undefined
    return isQuantity(q) ? toLedgerUnits(quantityValue(q)) : 0n
  })

const checkDecide = (c: Record<string, unknown>) =>
  Effect.gen(function* () {
    const plans = plansOf(c.plans)
    const p = c.policy as Record<string, unknown>
    if (plans === undefined || !Predicate.isRecord(p) || typeof c.now !== "number") return "malformed case"
    const view: PolicyView = {
      grant: typeof p.grant === "string" ? p.grant : null,
      principal: p.principal as string,
      server: p.server as string,
      deny: p.deny as ReadonlyArray<string>,
      outOfBand: p.outOfBand as "low" | "medium" | "high"
    }
    const got = yield* outcome(decide(plans, view, usedLookup(c.used), c.now), (d) =>
      d.kind === "nothing"
        ? { kind: "nothing" }
        : { kind: "run", planHash: d.plan.planHash, reserve: d.reserve.map((r) => ({ key: r.key, amount: r.amount.toString(), max: r.max.toString() })) }
    )
    return expectSame(got, c.expect)
  })

const checkForm = (c: Record<string, unknown>) =>
  Effect.sync(() => {
    const plans = plansOf(c.plans)
    const policy = tighteningOf(c.policy)
    if (plans === undefined || policy === undefined || typeof c.why !== "string") return "malformed case"
    return expectSame(buildForm(plans, c.why, policy, phrasesOf(c.phrases)), c.expect)
  })

const checkStateCase = (c: Record<string, unknown>) =>
  Effect.gen(function* () {
    const got = yield* Effect.either(checkState(c.state, c.expect as never))
    return Either.isRight(got) === c.valid ? undefined : `expected valid=${String(c.valid)}, got ${Either.isRight(got)}`
  })

const checkJudge = (c: Record<string, unknown>) =>
  Effect.gen(function* () {
    const state = Schema.decodeUnknownOption(RequestState)(c.state)
    const recomputed = plansOf(c.recomputed)
    const policy = tighteningOf(c.policy)
    if (Option.isNone(state) || recomputed === undefined || policy === undefined) return "malformed case"
    const got = yield* outcome(judgeAnswer(state.value, c.answer as Answer, recomputed, policy, phrasesOf(c.phrases)), (p) => ({ kind: "run", plan: p.planHash }))
    // The vectors name a refusal "refuse"; our code is "refused".
    const g = got as Record<string, unknown>
    const named = g.kind === "refused" ? { ...g, kind: "refuse" } : g
    // Only the members the vector pins are compared (it gives no reason text for a decline).
    const want = Predicate.isRecord(c.expect) ? c.expect : {}
    return expectSame(Object.fromEntries(Object.keys({ ...want, kind: 0 }).map((k) => [k, named[k]])), c.expect)
  })

const checkUndo = (json: Record<string, unknown>) =>
  Effect.gen(function* () {
    const receipts = Schema.decodeUnknownOption(Schema.Array(JobReceipt))(json.receipts)
    if (Option.isNone(receipts) || !Array.isArray(json.cases) || typeof json.service !== "string") return [{ name: "undo", failure: "malformed section" }]
    const out: Array<ApprovalCase> = []
    for (const c of json.cases as ReadonlyArray<Record<string, unknown>>) {
      const store = yield* makeMemoryApprovalStore
      for (const r of receipts.value) yield* store.putReceipt(r)
      if (c.undoneBefore === true && typeof c.id === "string") {
        yield* store.claimUndo(c.id)
        yield* store.markUndone(c.id)
      }
      let reverted = 0
      const got = yield* outcome(
        undoJob({ id: String(c.id), service: json.service, sub: String(c.sub), now: Number(c.now) }, () => Effect.sync(() => void reverted++)),
        () => ({ kind: "undone" })
      ).pipe(Effect.provideService(ApprovalStore, store))
      const kind = (got as { kind: string }).kind === "undo-refused" ? { ...(got as object), kind: "refused" } : got
      const ranOnce = (kind as { kind: string }).kind === "undone" ? reverted === 1 : reverted === 0
      out.push({ name: `undo: ${String(c.name)}`, failure: expectSame(kind, c.expect) ?? (ranOnce ? undefined : `revert ran ${reverted} times`) })
    }
    return out
  }).pipe(Effect.orDie)

const checkConsents = (json: Record<string, unknown>, keys: Record<string, unknown>) =>
  Effect.gen(function* () {
    const plan = Schema.decodeUnknownOption(HashedPlan)(json.plan)
    if (Option.isNone(plan) || !Array.isArray(json.cases)) return [{ name: "consents", failure: "malformed section" }]
    const out: Array<ApprovalCase> = []
    for (const c of json.cases as ReadonlyArray<Record<string, unknown>>) {
      const got = yield* Effect.match(
        checkJobConsent(String(c.grant), { plan: plan.value, principal: keys.principal as string, server: keys.server as string, now: Number(c.now) }),
        { onSuccess: (r) => ({ ok: true, id: r.id }), onFailure: (e) => ({ ok: false, why: e.why }) }
      )
      out.push({ name: `consents: ${String(c.name)}`, failure: expectSame(got, c.expect) })
    }
    return out
  })

const checkConsentCode = (v: Record<string, unknown>) =>
  Effect.gen(function* () {
    const plan = Schema.decodeUnknownOption(HashedPlan)(v.plan)
    if (Option.isNone(plan)) return "malformed case"
    const code = yield* Effect.either(
      jobConsentCode({ server: String(v.server), principal: String(v.principal), input: v.input, plan: plan.value, phrase: String(v.phrase), now: Number(v.now) })
    )
    if (Either.isLeft(code)) return `encoding failed: ${code.left.why}`
    if (code.right !== v.code) return `expected ${show(v.code)}, got ${show(code.right)}`
    const back = yield* Effect.either(decodeJobConsentCode(code.right))
    if (Either.isLeft(back)) return `decoding failed: ${back.left.why}`
    return back.right.hash === plan.value.planHash && back.right.phrase === v.phrase ? undefined : "decoding lost a member"
  })

/** The four operations the vectors describe, applied through the layout functions. */
const checkFileStore = (v: Record<string, unknown>, policyBlockId: unknown, now: number, refundHash: string) =>
  Effect.sync(() => {
    if (!Predicate.isRecord(v.files) || !Array.isArray(v.ops) || v.ops.length !== 4 || typeof policyBlockId !== "string") return "malformed case"
    const files: Record<string, string> = {}
    files[consumedFile("n_1")] = consumedContent(now + 600)
    files[ledgerFile(policyBlockId, "emails")] = ledgerContent({ settled: 5n, reserved: {} })
    files[consentFile(refundHash)] = "pg1.example"
    files[undoClaimFile("r_AAAAAAAAAAAA")] = UNDO_CLAIM_CONTENT
    files[undoDoneFile("r_AAAAAAAAAAAA")] = UNDO_DONE_CONTENT
    return expectSame(files, v.files)
  })

const each = (
  section: string,
  list: unknown,
  check: (c: Record<string, unknown>, i: number) => Effect.Effect<string | undefined>,
  name: (c: Record<string, unknown>, i: number) => string = (c, i) => (typeof c.name === "string" ? c.name : `#${i}`)
): Effect.Effect<ReadonlyArray<ApprovalCase>> =>
  Array.isArray(list)
    ? Effect.forEach(list, (c, i) =>
        Predicate.isRecord(c)
          ? Effect.map(check(c, i), (failure) => ({ name: `${section}: ${name(c, i)}`, failure }))
          : Effect.succeed({ name: `${section}: #${i}`, failure: "malformed case" })
      )
    : Effect.succeed([{ name: section, failure: "missing section" }])

/** Every case of approval.json. */
export const checkApprovalFile = (json: unknown): Effect.Effect<ReadonlyArray<ApprovalCase>> =>
  Effect.gen(function* () {
    if (!Predicate.isRecord(json) || !Predicate.isRecord(json.keys)) return [{ name: "(file)", failure: "expected the approval.json sections" }]
    const out: Array<ApprovalCase> = []
    out.push(...(yield* each("hash", json.hash, checkHash)))
    out.push(...(yield* each("decide", json.decide, checkDecide)))
    out.push(...(yield* each("phrases", json.phrases, (c) => Effect.sync(() => (phraseMatches(c.typed, c.phrase as string) === c.match ? undefined : `expected match=${String(c.match)}`)), (c) => show(c.typed))))
    out.push(
      ...(yield* each(
        "phraseChecks",
        json.phraseChecks,
        (c) => Effect.map(Effect.option(effectivePhrase(c.phrase as string)), (o) => expectSame(Option.getOrNull(o), c.expect)),
        (c) => show(c.phrase)
      ))
    )
    out.push(...(yield* each("forms", json.forms, checkForm)))
    out.push(...(yield* each("states", json.states, checkStateCase)))
    out.push(...(yield* each("judge", json.judge, checkJudge)))
    out.push(...(yield* each("tightening", json.tightening, (c) => Effect.sync(() => expectSame(readTightening(c.file), c.expect)))))
    out.push(...(Predicate.isRecord(json.undo) ? yield* checkUndo(json.undo) : [{ name: "undo", failure: "missing section" }]))
    out.push(...(Predicate.isRecord(json.consents) ? yield* checkConsents(json.consents, json.keys) : [{ name: "consents", failure: "missing section" }]))
    out.push({ name: "consentCode", failure: Predicate.isRecord(json.consentCode) ? yield* checkConsentCode(json.consentCode) : "missing section" })
    const refund = Predicate.isRecord(json.consentCode) && Predicate.isRecord(json.consentCode.plan) ? String(json.consentCode.plan.planHash) : ""
    out.push({
      name: "fileStore",
      failure: Predicate.isRecord(json.fileStore) ? yield* checkFileStore(json.fileStore, json.policyBlockId, Number(json.now), refund) : "missing section"
    })
    return out
  })
