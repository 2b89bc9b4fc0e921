// What every verb of the service runtime shares: the declared service, the stores, and the request's
// verified identity. Built once per runtime (runtime.ts); the verb modules only read it.
import { Clock, Effect, Either, Option } from "effect"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import type { VerificationCacheSync } from "../../kernel/verification-cache.js"
import { authorizeWithReservationsAt, type AuthorizeRequest, type Authorized } from "../authorize.js"
import type { EventFrame, RequestFrame } from "../frame.js"
import { subjectOfFrame, verifyProofAt, type VerifiedProof } from "../proof.js"
import { yeaError, type YeaError, type ConsentRequest } from "../reason.js"
import type { YeaAutoMemory, YeaCommits, YeaHandles, YeaProposals } from "../state.js"
import type { ServiceSpec } from "./define.js"

export type StateContext = YeaProposals | YeaCommits | YeaAutoMemory | YeaHandles | Reservations | Atomic | RandomBytes

export interface Env<R = never> {
  readonly spec: ServiceSpec<R>
  /** This runtime instance: a pending commit claimed by another instance was interrupted. */
  readonly owner: string
  /**
   * The commits (by proposal id) and UNDOs this instance is running now. A pending claim of this
   * instance that is not here lost its outcome (the store refused to record it): its replay is
   * answered as unknown.
   */
  readonly running: Set<string>
  /** Runs a handler effect with the context captured when the service was made. */
  readonly provide: <A, E>(eff: Effect.Effect<A, E, R>) => Effect.Effect<A, E>
  /**
   * Bounds the atomic claim-and-reserve steps running at once, so a burst of commits waits here
   * rather than exhausting the store's connections (each step holds one for its transaction).
   */
  readonly gate: Effect.Semaphore
  /** The VerificationCache of the runtime's context, as plain functions (read once when made). */
  readonly cache: VerificationCacheSync | undefined
}

export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

/** `prefix` and 72 random bits in base64url (ids of proposals, receipts, replies). */
export const newId = (prefix: string): Effect.Effect<string, never, RandomBytes> =>
  Effect.flatMap(RandomBytes, (r) => Effect.map(r.bytes(9), (b) => prefix + encodeBase64url(b)))

/** The request as the runtime sees it once its proof (if any) has been verified. */
export interface Request {
  readonly frame: RequestFrame
  readonly proof: Option.Option<VerifiedProof>
  readonly emit: (event: Omit<EventFrame, "yea" | "id" | "re">) => Effect.Effect<void>
}

/** A handler's `progress`: an EVENT frame on the request's stream, with its progress when given. */
export const progressOf = (req: Request) => (message: string, progress?: number): Effect.Effect<void> =>
  req.emit({ kind: "EVENT", message, ...(progress !== undefined ? { progress } : {}) })

/** §6.5: verifies the frame's proof when it carries one, at `now`; a frame with grants must carry one (§3). */
export const verifyRequestProof = <R>(env: Env<R>, frame: RequestFrame, now: number): Either.Either<Option.Option<VerifiedProof>, YeaError> => {
  const grants = frame.grants ?? []
  if (frame.proof === undefined) {
    if (grants.length > 0) return Either.left(yeaError("unauthorized", "grants need a proof of possession (§6.5)", { path: "proof" }))
    return Either.right(Option.none())
  }
  const subject = subjectOfFrame(frame)
  if (Option.isNone(subject)) return Either.left(yeaError("unauthorized", "this verb carries no proof", { path: "proof" }))
  return Either.map(verifyProofAt(frame.proof, env.spec.id, subject.value, now, env.cache), Option.some)
}

/**
 * Authorizes `request` with the frame's grants (§6.4, §6.6). `principal` binds the grant to a
 * principal (§4.4, §4.5).
 */
export const authorizeGrants = <R>(
  env: Env<R>,
  frame: RequestFrame,
  proof: VerifiedProof,
  request: AuthorizeRequest,
  extra: { readonly principal?: string; readonly consentFor?: (principal: string) => ConsentRequest } = {}
): Effect.Effect<Authorized, YeaError, Reservations> =>
  Effect.flatMap(nowSeconds, (now) =>
    authorizeWithReservationsAt({
      grants: frame.grants ?? [],
      proofKey: proof.key,
      trusted: env.spec.trust,
      request,
      ...extra
    }, now, env.cache))

/** Maps a store failure to `unavailable` (§7): the request may be retried. */
export const storeFailure = (e: { readonly message: string }): YeaError => yeaError("unavailable", `store: ${e.message}`, { retry: 1 })

/** A store lookup that must find its record: a store failure is `unavailable`, none is `not_found`. */
export const found = <A, R>(lookup: Effect.Effect<Option.Option<A>, { readonly _tag: "StoreError"; readonly message: string }, R>, missing: string): Effect.Effect<A, YeaError, R> =>
  lookup.pipe(
    Effect.mapError(storeFailure),
    Effect.flatMap((o) => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(yeaError("not_found", missing))))
  )
