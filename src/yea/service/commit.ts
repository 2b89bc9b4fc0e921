// COMMIT (SPEC §4.4), its use by auto-commit (§4.3.1), and UNDO (§4.5).
//
// A commit is claimed and its `total` limits reserved in ONE atomic step (§6.3 "atomically with the
// check and before executing"): two concurrent commits of one proposal cannot both run, and two
// commits under one `total` cannot together exceed it. A proposal runs at most once (§4.4 "MUST NOT
// execute again"): the claim is never dropped. Its outcome is recorded whatever happens to the
// caller: the receipt, a refusal (`failed`, the reservation released), or `unknown` when the effect
// may have reached the outside world (a service error such as an upstream 5xx or timeout, a defect,
// an interruption; the reservation stays drawn). Every later COMMIT answers what was recorded. The
// claim names the runtime instance that made it, so a claim left pending by a killed process is
// known to be interrupted: it is never run again, and its replay is answered `conflict`.
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import { Atomic, Reservations } from "../../accounting/reservations.js"
import { reserveTotals } from "../authorize.js"
import type { TotalDraw } from "../caveat.js"
import { consentRequestFor } from "../consent.js"
import type { CommitFrame, UndoFrame } from "../frame.js"
import type { VerifiedProof } from "../proof.js"
import { yeaError, type YeaError, type YeaReason } from "../reason.js"
import { type Receipt, undoRequest } from "../receipt.js"
import { type CommitOutcome, type CommitRecord, type ProposalRecord, YeaCommits, YeaProposals } from "../state.js"
import type { CommitContext, IntentSpec } from "./define.js"
import { authorizeGrants, type Env, found, newId, nowSeconds, progressOf, type Request, type StateContext, storeFailure } from "./env.js"

const reservationId = <R>(env: Env<R>, proposal: string) => `yea/commit/${env.spec.id}/${proposal}`
/** The key of a running UNDO in `env.running` (commits are keyed by their proposal id). */
const undoKey = (proposal: string) => `undo ${proposal}`

const intentOf = <R>(env: Env<R>, capability: string): Effect.Effect<IntentSpec<R>, YeaError> => {
  const c = Object.prototype.hasOwnProperty.call(env.spec.capabilities, capability) ? env.spec.capabilities[capability] : undefined
  return c !== undefined && c.kind === "intent" ? Effect.succeed(c) : Effect.fail(yeaError("unknown_capability", `no intent capability ${capability}`))
}

/** The answer to a commit of an interrupted (killed) claim, or of one whose outcome was lost. */
const interrupted = () => yeaError("conflict", "this commit was interrupted and its outcome is unknown; it will not run again")

/**
 * What to answer for an existing commit record (§4.4 "MUST NOT execute again"): the original
 * receipt, the recorded outcome of a commit that ended without one, or why there is none yet.
 */
const existing = <R>(env: Env<R>, rec: CommitRecord): Effect.Effect<Receipt, YeaError> => {
  if (rec.state === "done" && rec.receipt !== undefined) return Effect.succeed(rec.receipt)
  if ((rec.state === "failed" || rec.state === "unknown") && rec.outcome !== undefined) return Effect.fail(yeaError(rec.outcome.code, rec.outcome.message))
  // Pending: running in this instance, or claimed by an instance that is gone (a claim names the
  // runtime instance that made it), or one whose outcome could not be recorded. Never run again.
  return rec.state === "pending" && rec.owner === env.owner && env.running.has(rec.proposal)
    ? Effect.fail(yeaError("unavailable", "this proposal is being committed", { retry: 1 }))
    : Effect.fail(interrupted())
}

/**
 * §7 codes that say the service failed rather than that the request was refused (`unavailable`,
 * `internal`, e.g. an upstream 5xx or timeout): a commit that ends with one may have acted.
 */
const MAY_HAVE_ACTED: ReadonlySet<YeaReason> = new Set<YeaReason>(["unavailable", "internal"])

const unknownOutcome = (what: "commit" | "undo", why: string): CommitOutcome => ({
  state: "unknown",
  code: "conflict",
  message: `this ${what}'s outcome is unknown (${why}) and it will not run again; check its effect${what === "commit" ? " before running INTENT again" : ""}`
})

/**
 * The outcome of a commit handler that did not succeed. A refusal (any other §7 code) is `failed`:
 * nothing happened. A service failure, a defect or an interruption may have reached the outside
 * world, so it is `unknown`, answered `conflict` (§7: the world changed; re-run INTENT).
 */
const outcomeOf = (what: "commit" | "undo", cause: Cause.Cause<YeaError>): CommitOutcome => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    return MAY_HAVE_ACTED.has(e.reason) ? unknownOutcome(what, e.message) : { state: "failed", code: e.reason, message: e.message }
  }
  return unknownOutcome(what, Cause.isInterruptedOnly(cause) ? "it was interrupted" : "the service failed")
}

/** How a failed handler ended, as recorded; a defect (neither a YeaError nor an interruption) is logged. */
const failedOutcome = (what: "commit" | "undo", cause: Cause.Cause<YeaError>): Effect.Effect<CommitOutcome> =>
  Effect.as(
    !Cause.isInterruptedOnly(cause) && Option.isNone(Cause.failureOption(cause)) ? Effect.logError(`yea ${what} handler defect`, cause) : Effect.void,
    outcomeOf(what, cause)
  )

/**
 * Claims the commit of `record` and reserves its `total` draws in one atomic step, runs the
 * capability's commit, and records how it ended. Uninterruptible except for the handler itself:
 * once claimed, the outcome is always recorded, and an interrupted handler is an unknown outcome.
 */
const claimAndRun = <R>(
  env: Env<R>,
  req: Request,
  record: ProposalRecord,
  cap: IntentSpec<R>,
  who: { readonly requester: string; readonly principal: string },
  draws: ReadonlyArray<TotalDraw>
): Effect.Effect<{ readonly receipt: Receipt; readonly replay: boolean }, YeaError, StateContext> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const commits = yield* YeaCommits
      const atomic = yield* Atomic
      const reservations = yield* Reservations
      const p = record.proposal
      const rid = reservationId(env, p.id)
      const prior = yield* env.gate.withPermits(1)(atomic
        .transaction(
          Effect.gen(function* () {
            const prior = yield* commits.claim({ proposal: p.id, state: "pending", owner: env.owner, ...who, action: record.action })
            if (Option.isNone(prior)) yield* reserveTotals(rid, draws)
            return prior
          })
        ))
        .pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
      if (Option.isSome(prior)) return { receipt: yield* existing(env, prior.value), replay: true }
      env.running.add(p.id)
      return yield* Effect.gen(function* () {
        const now = yield* nowSeconds
        const ctx: CommitContext = { proposal: p.id, requester: who.requester, principal: who.principal, now, progress: progressOf(req) }
        const exit = yield* Effect.exit(restore(env.provide(cap.commit(record.action, ctx))))
        if (Exit.isFailure(exit)) {
          const outcome = yield* failedOutcome("commit", exit.cause)
          yield* commits.settle(p.id, outcome).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
          // §6.3: a reservation is released if execution fails; one that may have acted stays
          // drawn, as spent (never over the limit, never given back to a second run).
          if (draws.length > 0) yield* Effect.ignore(outcome.state === "failed" ? reservations.settleFailure(rid) : reservations.commit(rid))
          return yield* Effect.fail(yeaError(outcome.code, outcome.message))
        }
        const result = exit.value
        const receipt: Receipt = {
          id: yield* newId("r_"),
          proposal: p.id,
          capability: p.capability,
          summary: p.summary,
          at: now,
          effects: p.effects,
          undo: p.undo === null ? null : { until: now + p.undo.window },
          ...(p.uses !== undefined ? { uses: p.uses } : {}),
          ...(result !== undefined ? { result } : {})
        }
        yield* commits.complete(p.id, receipt).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
        // A failed settle leaves the hold counted as used: conservative, never over the limit.
        if (draws.length > 0) yield* Effect.ignore(reservations.commit(rid))
        return { receipt, replay: false }
      }).pipe(Effect.ensuring(Effect.sync(() => env.running.delete(p.id))))
    })
  )

/**
 * Runs an authorized commit (claimAndRun) in a fiber of its own, which the caller only waits for:
 * a caller that goes away (a client that disconnects, a timeout) stops waiting, while the commit
 * runs to its end and records its outcome, answered to the next COMMIT of the proposal.
 */
export const runCommit = <R>(
  env: Env<R>,
  req: Request,
  record: ProposalRecord,
  who: { readonly requester: string; readonly principal: string },
  draws: ReadonlyArray<TotalDraw>
): Effect.Effect<{ readonly receipt: Receipt; readonly replay: boolean }, YeaError, StateContext> =>
  Effect.gen(function* () {
    const cap = yield* intentOf(env, record.proposal.capability)
    const fiber = yield* Effect.forkDaemon(claimAndRun(env, req, record, cap, who, draws))
    return yield* Fiber.join(fiber)
  })

/** COMMIT (§4.4). */
export const commit = <R>(env: Env<R>, req: Request & { readonly frame: CommitFrame }) =>
  Effect.gen(function* () {
    const { frame } = req
    // §3: COMMIT requires grants and proof (verified at dispatch).
    if (Option.isNone(req.proof) || (frame.grants ?? []).length === 0) {
      return yield* Effect.fail(yeaError("unauthorized", "COMMIT needs grants and a proof (§3)"))
    }
    const proof = req.proof.value
    const record = yield* found(Effect.flatMap(YeaProposals, (s) => s.get(frame.proposal)), `no proposal ${frame.proposal}`)
    // §4.4 "Who may commit": only the key whose verified proof was on the INTENT.
    if (record.requester === undefined) return yield* Effect.fail(yeaError("forbidden", "a proposal from an INTENT without a proof can't be committed"))
    if (record.requester !== proof.key) return yield* Effect.fail(yeaError("forbidden", "this proposal was made for another agent"))
    // §4.4: the hash must match; `conflict` never says what it should have been.
    if (record.proposal.hash !== frame.hash) return yield* Effect.fail(yeaError("conflict", "the proposal changed since it was shown; run INTENT again"))
    const request = { service: env.spec.id, verb: "COMMIT" as const, capability: record.proposal.capability }
    const proposal = { hash: record.proposal.hash, risk: record.proposal.risk, uses: record.proposal.uses }
    // Idempotency: a committed proposal answers its receipt, authorized like the commit without limits.
    const prior = yield* Effect.flatMap(YeaCommits, (s) => s.byProposal(record.proposal.id)).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
    if (Option.isSome(prior)) {
      if (prior.value.requester !== proof.key) return yield* Effect.fail(yeaError("forbidden", "this proposal was committed by another agent"))
      yield* authorizeGrants(env, frame, proof, { ...request, proposal, replay: true }, { principal: prior.value.principal })
      return { receipt: yield* existing(env, prior.value), replay: true }
    }
    const now = yield* nowSeconds
    if (now >= record.proposal.expires) return yield* Effect.fail(yeaError("expired", "the proposal has expired; run INTENT again"))
    const auth = yield* authorizeGrants(env, frame, proof, { ...request, proposal }, {
      ...(record.principal !== undefined ? { principal: record.principal } : {}),
      consentFor: (principal) => consentRequestFor(record.proposal, env.spec.id, principal)
    })
    return yield* runCommit(env, req, record, { requester: proof.key, principal: auth.grant.principal }, auth.draws)
  })

/**
 * Auto-commit of the first proposal (§4.3.1): only when a grant authorizes its COMMIT outright and
 * it is undoable. None means "reply as without auto".
 */
export const tryAutoCommit = <R>(env: Env<R>, req: Request, record: ProposalRecord, proof: VerifiedProof) =>
  Effect.gen(function* () {
    if (record.proposal.undo === null) return Option.none()
    const p = record.proposal
    const auth = yield* Effect.option(
      authorizeGrants(env, req.frame, proof, { service: env.spec.id, verb: "COMMIT", capability: p.capability, proposal: { hash: p.hash, risk: p.risk, uses: p.uses } }, {
        ...(record.principal !== undefined ? { principal: record.principal } : {})
      })
    )
    if (Option.isNone(auth)) return Option.none()
    // A concurrent commit may take the last of a `total` between check and reserve: then the
    // reservation refuses (consent_required) and the reply is the proposals, as without auto.
    const done = yield* runCommit(env, req, record, { requester: proof.key, principal: auth.value.grant.principal }, auth.value.draws).pipe(
      Effect.map(Option.some),
      Effect.catchIf((e) => e.reason === "consent_required" || e.reason === "forbidden", () => Effect.succeed(Option.none()))
    )
    return done
  })

/** What to answer for an UNDO already claimed: the original reversal, its recorded outcome, or why there is none yet. */
const existingUndo = <R>(env: Env<R>, rec: CommitRecord): Effect.Effect<Receipt, YeaError> => {
  const u = rec.undo
  if (u?.state === "done" && u.receipt !== undefined) return Effect.succeed(u.receipt)
  if ((u?.state === "failed" || u?.state === "unknown") && u.outcome !== undefined) return Effect.fail(yeaError(u.outcome.code, u.outcome.message))
  return u?.state === "pending" && u.owner === env.owner && env.running.has(undoKey(rec.proposal))
    ? Effect.fail(yeaError("unavailable", "this receipt is being undone", { retry: 1 }))
    : Effect.fail(yeaError("conflict", "this undo was interrupted and its outcome is unknown; it will not run again"))
}

/**
 * Claims the UNDO of `rec`'s receipt, runs the capability's undo and records how it ended, as a
 * commit does (claimAndRun): at most once, whatever happens to the caller.
 */
const claimAndUndo = <R>(
  env: Env<R>,
  req: Request,
  rec: CommitRecord,
  receipt: Receipt,
  cap: IntentSpec<R> & { readonly undo: NonNullable<IntentSpec<R>["undo"]> },
  requester: string,
  now: number
): Effect.Effect<{ readonly receipt: Receipt; readonly replay: boolean }, YeaError, StateContext> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const commits = yield* YeaCommits
      // The claim re-checks whether an undo already ran or finished (design.md security review).
      const claimed = yield* commits.claimUndo(rec.proposal, env.owner).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
      if (Option.isSome(claimed)) return { receipt: yield* existingUndo(env, claimed.value), replay: true }
      const key = undoKey(rec.proposal)
      env.running.add(key)
      return yield* Effect.gen(function* () {
        const ctx: CommitContext = { proposal: rec.proposal, requester, principal: rec.principal, now, progress: progressOf(req) }
        const exit = yield* Effect.exit(restore(env.provide(cap.undo(rec.action, receipt.result, ctx))))
        if (Exit.isFailure(exit)) {
          const outcome = yield* failedOutcome("undo", exit.cause)
          yield* commits.settleUndo(rec.proposal, outcome).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
          return yield* Effect.fail(yeaError(outcome.code, outcome.message))
        }
        const result = exit.value
        const reversal: Receipt = {
          id: yield* newId("r_"),
          proposal: rec.proposal,
          capability: receipt.capability,
          summary: receipt.summary,
          at: now,
          effects: [],
          undo: null,
          undoes: receipt.id,
          ...(result !== undefined ? { result } : {})
        }
        yield* commits.completeUndo(rec.proposal, reversal).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
        return { receipt: reversal, replay: false }
      }).pipe(Effect.ensuring(Effect.sync(() => env.running.delete(key))))
    })
  )

/** UNDO (§4.5): same principal as the commit, within the window; a repeat answers the original reversal. */
export const undo = <R>(env: Env<R>, req: Request & { readonly frame: UndoFrame }) =>
  Effect.gen(function* () {
    const { frame } = req
    if (Option.isNone(req.proof) || (frame.grants ?? []).length === 0) {
      return yield* Effect.fail(yeaError("unauthorized", "UNDO needs grants and a proof (§3)"))
    }
    const proof = req.proof.value
    const commits = yield* YeaCommits
    const rec = yield* found(commits.byReceipt(frame.receipt), `no receipt ${frame.receipt}`)
    const receipt = rec.receipt!
    // §4.5, §6.3: `can` against the receipt's capability, a grant of the commit's principal.
    yield* authorizeGrants(env, frame, proof, undoRequest(receipt, env.spec.id), { principal: rec.principal })
    if (rec.undo !== undefined) return { receipt: yield* existingUndo(env, rec), replay: true }
    const now = yield* nowSeconds
    if (receipt.undo === null) return yield* Effect.fail(yeaError("expired", "this action cannot be undone"))
    if (now >= receipt.undo.until) return yield* Effect.fail(yeaError("expired", "the undo window has closed"))
    const cap = yield* intentOf(env, receipt.capability)
    if (cap.undo === undefined) return yield* Effect.fail(yeaError("expired", "this action cannot be undone"))
    // Like a commit, the UNDO runs in a fiber of its own that the caller only waits for.
    const fiber = yield* Effect.forkDaemon(claimAndUndo(env, req, rec, receipt, { ...cap, undo: cap.undo }, proof.key, now))
    return yield* Fiber.join(fiber)
  })
