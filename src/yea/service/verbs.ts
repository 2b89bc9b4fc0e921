// HELLO (SPEC §4.1), ASK (§4.2), INTENT (§4.3 with §4.3.1 auto) and EXPAND (§4.6).
import { Effect, Either, Option } from "effect"
import type { AskFrame, ExpandFrame, HelloFrame, IntentFrame, ReplyBody } from "../frame.js"
import type { Elided } from "../lens/budget.js"
import { expandSliceEffect } from "../lens/expand.js"
import { checkParams } from "../params.js"
import { proposalHash, type Proposal } from "../proposal.js"
import { yeaError, type YeaError } from "../reason.js"
import { type ProposalRecord, YeaAutoMemory, YeaHandles, YeaProposals } from "../state.js"
import { capabilityEntry, type CapabilitySpec, type HandlerContext, type Plan } from "./define.js"
import { tryAutoCommit } from "./commit.js"
import { authorizeGrants, type Env, found, newId, nowSeconds, progressOf, type Request, storeFailure } from "./env.js"

/** §4.3.1: a service remembers an auto frame at least 900 s after the later of arrival and proof.ts. */
export const AUTO_MEMORY_SECONDS = 900
const DEFAULT_TTL = 600

export const hello = <R>(env: Env<R>, _req: Request & { readonly frame: HelloFrame }): Effect.Effect<ReplyBody> =>
  Effect.succeed(briefBody(env))

export const briefBody = <R>(env: Env<R>): ReplyBody => ({
  kind: "BRIEF",
  service: { id: env.spec.id, name: env.spec.name, ...(env.spec.summary !== undefined ? { summary: env.spec.summary } : {}) },
  capabilities: Object.keys(env.spec.capabilities).map((n) => capabilityEntry(n, env.spec.capabilities[n]))
})

const capabilityOf = <R>(env: Env<R>, name: string, kind: "ask" | "intent"): Effect.Effect<CapabilitySpec<R>, YeaError> => {
  const c = Object.prototype.hasOwnProperty.call(env.spec.capabilities, name) ? env.spec.capabilities[name] : undefined
  if (c === undefined) return Effect.fail(yeaError("unknown_capability", `no capability ${name}`))
  if (c.kind !== kind) return Effect.fail(yeaError("unknown_capability", `${name} is an ${c.kind} capability`))
  return Effect.succeed(c)
}

/** Grants on ASK and INTENT (§3): checked when present, required when the service says so. */
const principalFor = <R>(env: Env<R>, req: Request & { readonly frame: AskFrame | IntentFrame }) =>
  Effect.gen(function* () {
    const grants = req.frame.grants ?? []
    if (grants.length === 0) {
      if (env.spec.requireGrants === true) return yield* Effect.fail(yeaError("unauthorized", "this service requires grants"))
      return undefined
    }
    const auth = yield* authorizeGrants(env, req.frame, Option.getOrThrow(req.proof), {
      service: env.spec.id,
      verb: req.frame.verb,
      capability: req.frame.capability
    })
    return auth.grant.principal
  })

const context = (req: Request, params: Readonly<Record<string, unknown>>, principal: string | undefined, now: number): HandlerContext => ({
  params,
  now,
  ...(Option.isSome(req.proof) ? { requester: req.proof.value.key } : {}),
  ...(principal !== undefined ? { principal } : {}),
  progress: progressOf(req)
})

export const askVerb = <R>(env: Env<R>, req: Request & { readonly frame: AskFrame }) =>
  Effect.gen(function* () {
    const cap = yield* capabilityOf(env, req.frame.capability, "ask")
    const principal = yield* principalFor(env, req)
    const params = yield* checkParams(cap.params, req.frame.params)
    if (cap.kind !== "ask") return yield* Effect.die("unreachable")
    const data = yield* env.provide(cap.run(context(req, params, principal, yield* nowSeconds)))
    return { kind: "ANSWER", data: data ?? null } as ReplyBody
  })

/** §5.1: a plan as a proposal with its hash; `expires` rounded up to whole minutes. */
const toProposal = <R>(env: Env<R>, capability: string, cap: CapabilitySpec<R>, plan: Plan, id: string, now: number): Effect.Effect<Proposal, YeaError> => {
  const ttl = env.spec.proposalTtl ?? DEFAULT_TTL
  const undoable = cap.kind === "intent" && cap.undo !== undefined && typeof plan.undoWindow === "number" && plan.undoWindow > 0
  const hashed = {
    id,
    capability,
    summary: plan.summary,
    effects: plan.effects,
    ...(plan.uses !== undefined ? { uses: plan.uses } : {}),
    risk: plan.risk ?? (cap.kind === "intent" ? cap.risk : "low"),
    undo: undoable ? { window: plan.undoWindow as number } : null,
    expires: Math.ceil((now + ttl) / 60) * 60
  }
  const hash = proposalHash(hashed)
  if (Either.isLeft(hash)) return Effect.fail(yeaError("internal", `the plan has no canonical form: ${hash.left.message}`))
  return Effect.succeed({ ...hashed, hash: hash.right, ...(plan.data !== undefined ? { data: plan.data } : {}) })
}

const intentBody = <R>(env: Env<R>, req: Request & { readonly frame: IntentFrame }) =>
  Effect.gen(function* () {
    const name = req.frame.capability
    const cap = yield* capabilityOf(env, name, "intent")
    const principal = yield* principalFor(env, req)
    const params = yield* checkParams(cap.params, req.frame.params)
    if (cap.kind !== "intent") return yield* Effect.die("unreachable")
    const now = yield* nowSeconds
    const outcome = yield* env.provide(cap.plan(context(req, params, principal, now)))
    if (outcome._tag === "Clarify") return { kind: "CLARIFY", ...outcome.clarify } as ReplyBody
    if (outcome.plans.length === 0) return yield* Effect.fail(yeaError("conflict", "no way to do this right now"))
    const store = yield* YeaProposals
    const records: Array<ProposalRecord> = []
    for (const plan of outcome.plans) {
      const proposal = yield* toProposal(env, name, cap, plan, yield* newId("p_"), now)
      const record: ProposalRecord = {
        proposal,
        action: plan.action ?? null,
        ...(Option.isSome(req.proof) ? { requester: req.proof.value.key } : {}),
        ...(principal !== undefined ? { principal } : {}),
        keepUntil: proposal.expires
      }
      yield* store.put(record).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
      records.push(record)
    }
    yield* Effect.ignore(store.sweep(now))
    // §4.3.1: commit the first proposal when the grants allow it outright and it is undoable.
    if (req.frame.auto === true && Option.isSome(req.proof) && (req.frame.grants ?? []).length > 0) {
      const done = yield* tryAutoCommit(env, req, records[0], req.proof.value)
      if (Option.isSome(done)) return { kind: "RECEIPT", receipt: done.value.receipt, auto: true, ...(done.value.replay ? { replay: true } : {}) } as ReplyBody
    }
    return { kind: "PROPOSALS", proposals: records.map((r) => r.proposal) } as ReplyBody
  })

/**
 * INTENT. An auto frame with a verified proof is remembered by (proof.key, frame id): a repeat gets
 * the original reply (`replay: true` on a receipt) and never commits twice (§4.3.1).
 */
export const intentVerb = <R>(env: Env<R>, req: Request & { readonly frame: IntentFrame }) =>
  Effect.gen(function* () {
    if (req.frame.auto !== true || Option.isNone(req.proof)) return yield* intentBody(env, req)
    const proof = req.proof.value
    const memory = yield* YeaAutoMemory
    const now = yield* nowSeconds
    const until = Math.max(now, proof.ts) + AUTO_MEMORY_SECONDS
    // The frame id is scoped by the service id: two services sharing one store (one SQLite file)
    // must not answer each other's auto frames (a proof is bound to one service, §6.5).
    const frame = `${env.spec.id} ${req.frame.id}`
    const prior = yield* memory.remember({ key: proof.key, frame, until }).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(storeFailure(e))))
    if (Option.isSome(prior)) {
      const reply = prior.value.reply as ReplyBody | undefined
      if (reply === undefined) return yield* Effect.fail(yeaError("unavailable", "this auto frame is being answered", { retry: 1 }))
      return reply.kind === "RECEIPT" ? ({ ...reply, replay: true } as ReplyBody) : reply
    }
    yield* Effect.ignore(memory.sweep(now))
    const result = yield* Effect.either(intentBody(env, req))
    const body: ReplyBody = Either.isRight(result) ? result.right : { kind: "ERROR", code: result.left.reason, message: result.left.message }
    yield* Effect.ignore(memory.complete(proof.key, frame, body))
    return Either.isRight(result) ? result.right : yield* Effect.fail(result.left)
  })

/** §4.6: handles bound to the holder key of the request that made them. */
export const HANDLE_SECONDS = 900

export const expandVerb = <R>(env: Env<R>, req: Request & { readonly frame: ExpandFrame }, budget: number) =>
  Effect.gen(function* () {
    const handles = yield* YeaHandles
    const rec = yield* found(handles.get(req.frame.handle), `no handle ${req.frame.handle}`)
    const now = yield* nowSeconds
    if (now >= rec.expires) return yield* Effect.fail(yeaError("expired", "the handle has expired"))
    if (rec.holder !== undefined && (Option.isNone(req.proof) || req.proof.value.key !== rec.holder)) {
      return yield* Effect.fail(yeaError("unauthorized", "this handle needs a proof from the key that requested it"))
    }
    const fitted = yield* expandSliceEffect(rec.elided as Elided, budget)
    return { fitted, holder: rec.holder }
  })
