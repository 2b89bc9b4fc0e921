// The service runtime (SPEC §2.2, §4, §8): one request frame in, any number of EVENTs and exactly
// one final reply out. Every failure becomes an ERROR reply with its §7 code; a defect in a handler
// is `internal`, never a crash of the transport. Every final reply is fitted to the request's
// budget (§8), and the handles it opens are kept for EXPAND, bound to the requester's key (§4.6).
import { Context, Effect, Option } from "effect"
import { DecisionEvents } from "../../accounting/decision-events.js"
import { encodeBase64url } from "../../kernel/base64url.js"
import { RandomBytes } from "../../kernel/services.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../kernel/verification-cache.js"
import { DEFAULT_BUDGET, fitReplyEffect, type Fitted } from "../lens/budget.js"
import {
  decodeRequestEither,
  envelope,
  errorBody,
  type EventFrame,
  type FinalReply,
  MAX_FRAME_BYTES,
  type ReplyBody,
  type RequestFrame,
  replyTo
} from "../frame.js"
import { yeaError, type YeaError } from "../reason.js"
import { YeaHandles } from "../state.js"
import { commit, undo } from "./commit.js"
import { publishReply } from "./decisions.js"
import type { ServiceSpec } from "./define.js"
import { type Env, nowSeconds, type Request, type StateContext, verifyRequestProof } from "./env.js"
import { askVerb, briefBody, expandVerb, HANDLE_SECONDS, hello, intentVerb } from "./verbs.js"

export type EventBody = Omit<EventFrame, "yea" | "id" | "re">

export interface YeaServiceRuntime {
  /** The service's audience id (§4.1). */
  readonly id: string
  /**
   * Answers one request (an already parsed JSON value): EVENTs go to `emit` as they happen, the
   * final reply is the result. Never fails.
   */
  readonly handle: (frame: unknown, emit: (event: EventFrame) => Effect.Effect<void>) => Effect.Effect<FinalReply>
  /** The BRIEF to a default HELLO (§2.4 `GET /.well-known/yea`). */
  readonly brief: Effect.Effect<FinalReply>
  /** The ERROR reply for a frame refused before it could be read (oversized, not JSON). */
  readonly refuse: (error: YeaError, re?: string) => Effect.Effect<FinalReply>
}

/** The running service, for transports. */
export class YeaService extends Context.Tag("mandate/yea/Service")<YeaService, YeaServiceRuntime>() {}

/** Builds the runtime for `spec`; handler requirements `R` are captured now. */
export interface RuntimeOptions {
  /** Commit steps (claim and reservation, one store transaction each) running at once. Default 4. */
  readonly maxConcurrentCommits?: number
}

export const makeService = <R>(spec: ServiceSpec<R>, options: RuntimeOptions = {}): Effect.Effect<YeaServiceRuntime, never, R | StateContext> =>
  Effect.gen(function* () {
    // The proof and grant keys are judged once per key (kernel/verification-cache.ts): through the
    // VerificationCache in context, or one this runtime owns, of the default size.
    const outer = yield* Effect.context<R | StateContext>()
    const inContext = Context.getOption(outer, VerificationCache)
    const cache = Option.isSome(inContext) ? inContext.value : VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
    const captured: Context.Context<R | StateContext> = Option.isSome(inContext) ? outer : Context.add(outer, VerificationCache, cache)
    const random = yield* RandomBytes
    const owner = encodeBase64url(yield* random.bytes(12))
    // Reply and event ids from the RandomBytes captured now: no context to look up per frame.
    const replyId = Effect.map(random.bytes(6), (b) => "s_" + encodeBase64url(b))
    // Decisions go to the DecisionEvents in context when the runtime is made (by default, dropped).
    const events = yield* DecisionEvents
    const env: Env<R> = {
      spec,
      owner,
      running: new Set(),
      provide: (eff) => Effect.provide(eff, captured),
      gate: yield* Effect.makeSemaphore(options.maxConcurrentCommits ?? 4),
      cache: cache.sync
    }
    const run = <A, E>(eff: Effect.Effect<A, E, StateContext>) => Effect.provide(eff, captured)

    /** Fits `body` to `budget` and keeps its handles for `holder` (§4.6, §8). */
    const fit = (body: unknown, budget: number, holder: string | undefined, fitted?: Fitted) =>
      Effect.gen(function* () {
        const f = fitted ?? (yield* fitReplyEffect(body, budget))
        if (f.elided.length > 0) {
          const expires = (yield* nowSeconds) + HANDLE_SECONDS
          const handles = yield* YeaHandles
          yield* handles
            .put(f.elided.map((e) => ({ handle: e.handle, elided: e, expires, ...(holder !== undefined ? { holder } : {}) })))
            .pipe(Effect.orElse(() => Effect.void))
        }
        // Unavoidable: §8 fitting replaces members of the reply with handles, so the fitted reply
        // keeps its kind but is no longer the declared body type member by member; it is sent as is.
        return f.reply as unknown as ReplyBody
      })

    const dispatch = (req: Request, budget: number): Effect.Effect<ReplyBody, YeaError, StateContext> => {
      const holder = Option.isSome(req.proof) ? req.proof.value.key : undefined
      const f = req.frame
      // The whole reply, before fitting, is what the decisions are read from (decisions.ts).
      const decided = (b: ReplyBody) => Effect.zipRight(publishReply(events, f, holder, b), fit(b, budget, holder))
      switch (f.verb) {
        case "HELLO": return Effect.flatMap(hello(env, { ...req, frame: f }), (b) => fit(b, budget, holder))
        case "ASK": return Effect.flatMap(askVerb(env, { ...req, frame: f }), (b) => fit(b, budget, holder))
        case "INTENT": return Effect.flatMap(intentVerb(env, { ...req, frame: f }), decided)
        case "COMMIT":
          return Effect.flatMap(commit(env, { ...req, frame: f }), (r) =>
            decided({ kind: "RECEIPT", receipt: r.receipt, ...(r.replay ? { replay: true } : {}) }))
        case "UNDO":
          return Effect.flatMap(undo(env, { ...req, frame: f }), (r) =>
            decided({ kind: "RECEIPT", receipt: r.receipt, ...(r.replay ? { replay: true } : {}) }))
        case "EXPAND":
          return Effect.flatMap(expandVerb(env, { ...req, frame: f }, budget), (r) => fit(r.fitted.reply, budget, r.holder, r.fitted))
      }
    }

    const finish = (re: string, body: ReplyBody) =>
      Effect.map(replyId, (id) => {
        const frame = envelope(id, re, body) as FinalReply
        // §2.1: a reply must fit in a frame too; one that cannot is replaced by `limit`.
        // A string's UTF-8 form is at most 3 bytes a UTF-16 unit: most replies are judged by their
        // length alone, and the rest are counted without an encoded copy.
        const text = JSON.stringify(frame)
        return text.length * 3 > MAX_FRAME_BYTES && Buffer.byteLength(text, "utf8") > MAX_FRAME_BYTES
          ? (envelope(id, re, errorBody(yeaError("limit", "the reply is over 1 MiB; ask with a smaller budget"))) as FinalReply)
          : frame
      })

    const refuse = (error: YeaError, re = "") => finish(re, errorBody(error))

    const handle = (raw: unknown, emit: (event: EventFrame) => Effect.Effect<void>): Effect.Effect<FinalReply> => {
      const re = replyTo(raw)
      const body = Effect.gen(function* () {
        const frame: RequestFrame = yield* decodeRequestEither(raw)
        const proof = yield* verifyRequestProof(env, frame, yield* nowSeconds)
        const req: Request = {
          frame,
          proof,
          emit: (event) => Effect.flatMap(replyId, (id) => emit(envelope(id, frame.id, event) as EventFrame))
        }
        return yield* dispatch(req, frame.budget ?? DEFAULT_BUDGET).pipe(
          Effect.tapError((e) => publishReply(events, frame, Option.isSome(proof) ? proof.value.key : undefined, errorBody(e)))
        )
      }).pipe(
        Effect.catchTag("YeaError", (e) => Effect.succeed(errorBody(e))),
        Effect.catchAllDefect((d) => Effect.as(Effect.logError("yea handler defect", d), errorBody(yeaError("internal", "the service failed")))),
        // The span without a captured stack: an Error per frame was 1 to 2% of a COMMIT (issue 30).
        Effect.withSpan("yea.service.handle", { captureStackTrace: false })
      )
      return run(Effect.flatMap(body, (b) => finish(re, b)))
    }

    const brief = run(Effect.flatMap(fit(briefBody(env), DEFAULT_BUDGET, undefined), (b) => finish("", b)))
    return { id: spec.id, handle, brief, refuse }
  })
