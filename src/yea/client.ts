// The agent's side of YEA (SPEC §3, §4, §6.5, §6.6): connect, send every verb with proofs, check
// every reply, and render replies as Lens for the model.
//
// A connection is any transport (src/bind/yea-*): it sends one request and yields its EVENTs and
// final reply. The client checks each reply against the Schemas (a malformed one is `bad_frame`),
// re-hashes every proposal it receives (an invalid one is refused, §5.1), remembers the proposals
// it was shown so that a `consent_required` request is checked against the real proposal before
// anything is shown for signing (§6.6), and renders Lens with the hardened rendering, since the
// text comes from a third-party service (README, "Lens").
import { Context, Effect, Either, Option } from "effect"
import { encodeBase64url } from "../kernel/base64url.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { checkConsentRequest } from "./consent.js"
import { decodeReplyEither, type EventFrame, type FinalReply, type ReplyFrame } from "./frame.js"
import { lensReplyHardened } from "./lens/reply.js"
import { signProof, type ProofSubject } from "./proof.js"
import { decodeProposal, type Proposal } from "./proposal.js"
import { type ConsentRequest, yeaError, type YeaError } from "./reason.js"

/** One request/replies exchange over some transport. */
export interface YeaConnection {
  /** Sends `frame`; EVENTs for it go to `onEvent`; the result is its final reply (unchecked JSON). */
  readonly request: (frame: Readonly<Record<string, unknown>>, onEvent: (event: unknown) => Effect.Effect<void>) => Effect.Effect<unknown, YeaError>
  readonly close: Effect.Effect<void>
}

export interface RequestOptions {
  readonly budget?: number
  /** Extra grants for this request only (a consent grant, §6.6). */
  readonly grants?: ReadonlyArray<string>
  readonly onEvent?: (event: EventFrame) => Effect.Effect<void>
}

export interface YeaClientShape {
  /** The service id from the last BRIEF (proofs are bound to it, §6.5). */
  readonly service: () => string | undefined
  readonly hello: (options?: RequestOptions) => Effect.Effect<FinalReply, YeaError>
  readonly ask: (capability: string, params?: Readonly<Record<string, unknown>>, options?: RequestOptions) => Effect.Effect<FinalReply, YeaError>
  readonly intent: (
    capability: string,
    params?: Readonly<Record<string, unknown>>,
    options?: RequestOptions & { readonly goal?: string; readonly auto?: boolean }
  ) => Effect.Effect<FinalReply, YeaError>
  readonly commit: (proposal: Pick<Proposal, "id" | "hash">, options?: RequestOptions) => Effect.Effect<FinalReply, YeaError>
  readonly undo: (receipt: string, options?: RequestOptions) => Effect.Effect<FinalReply, YeaError>
  readonly expand: (handle: string, options?: RequestOptions) => Effect.Effect<FinalReply, YeaError>
  /** A proposal this client received (and verified) from the service, by id. */
  readonly proposal: (id: string) => Option.Option<Proposal>
  /**
   * §6.6: the consent request of a `consent_required` reply, checked against the proposal this
   * client actually received. Fails (`conflict`) when they differ: never show it for signing.
   */
  readonly consentOf: (reply: FinalReply) => Effect.Effect<{ readonly consent: ConsentRequest; readonly proposal: Proposal }, YeaError>
}

export class YeaClient extends Context.Tag("mandate/yea/Client")<YeaClient, YeaClientShape>() {}

export interface ClientOptions {
  /** The agent's grants, sent with every request but HELLO. */
  readonly grants?: ReadonlyArray<string>
  readonly agentName?: string
  readonly budget?: number
}

/** Proposals remembered for consent checks (bounded: oldest dropped first). */
const MAX_REMEMBERED = 1024

/** A client over `connection`, signing proofs with the agent's `Signer`. */
export const makeClient = (connection: YeaConnection, options: ClientOptions = {}): Effect.Effect<YeaClientShape, never, Signer | RandomBytes> =>
  Effect.gen(function* () {
    const signer = yield* Signer
    const random = yield* RandomBytes
    const ctx = Context.make(Signer, signer).pipe(Context.add(RandomBytes, random))
    let service: string | undefined
    const seen = new Map<string, Proposal>()
    const frameId = Effect.map(random.bytes(12), (b) => "c_" + encodeBase64url(b))

    const check = (raw: unknown): Effect.Effect<FinalReply, YeaError> =>
      Effect.gen(function* () {
        const reply: ReplyFrame = yield* decodeReplyEither(raw)
        if (reply.kind === "EVENT") return yield* Effect.fail(yeaError("bad_frame", "an EVENT is not a final reply"))
        if (reply.kind === "PROPOSALS") {
          // §5.1: a proposal whose hash does not verify, or with a malformed uses or risk, is invalid.
          for (const p of (raw as { proposals: ReadonlyArray<unknown> }).proposals) {
            const ok = yield* decodeProposal(p)
            if (seen.size >= MAX_REMEMBERED) seen.delete(seen.keys().next().value as string)
            seen.set(ok.id, ok)
          }
        }
        if (reply.kind === "BRIEF") service = reply.service.id
        return reply
      })

    const send = (verb: string, members: Record<string, unknown>, subject: ProofSubject | undefined, o: RequestOptions = {}) =>
      Effect.gen(function* () {
        const id = yield* frameId
        const grants = [...(options.grants ?? []), ...(o.grants ?? [])]
        const frame: Record<string, unknown> = { yea: 1, id, verb, ...members }
        const budget = o.budget ?? options.budget
        if (budget !== undefined) frame.budget = budget
        if (subject !== undefined && (grants.length > 0 || verb === "EXPAND")) {
          if (service === undefined) return yield* Effect.fail(yeaError("bad_frame", "send HELLO first: proofs are bound to the service id"))
          const target = subject.verb === "INTENT" && subject.auto === true ? { ...subject, frameId: id } : subject
          if (grants.length > 0) frame.grants = grants
          frame.proof = yield* Effect.provide(signProof(service, target), ctx)
        }
        const onEvent = (e: unknown) =>
          Either.match(decodeReplyEither(e), { onLeft: () => Effect.void, onRight: (r) => (r.kind === "EVENT" && o.onEvent ? o.onEvent(r) : Effect.void) })
        const raw = yield* connection.request(frame, onEvent)
        return yield* check(raw)
        // The span without a captured stack, as the service's (runtime.ts): an Error per request for nothing (issue 30).
      }).pipe(Effect.withSpan(`yea.client.${verb}`, { captureStackTrace: false }))

    return {
      service: () => service,
      hello: (o) => send("HELLO", options.agentName !== undefined ? { agent: { name: options.agentName } } : {}, undefined, o),
      ask: (capability, params, o) => send("ASK", { capability, ...(params ? { params } : {}) }, { verb: "ASK", capability }, o),
      intent: (capability, params, o) =>
        send(
          "INTENT",
          { capability, ...(params ? { params } : {}), ...(o?.goal !== undefined ? { goal: o.goal } : {}), ...(o?.auto === true ? { auto: true } : {}) },
          o?.auto === true ? { verb: "INTENT", capability, auto: true, frameId: "" } : { verb: "INTENT", capability },
          o
        ),
      commit: (p, o) => send("COMMIT", { proposal: p.id, hash: p.hash }, { verb: "COMMIT", hash: p.hash }, o),
      undo: (receipt, o) => send("UNDO", { receipt }, { verb: "UNDO", receipt }, o),
      expand: (handle, o) => send("EXPAND", { handle }, { verb: "EXPAND", handle }, o),
      proposal: (id) => Option.fromNullable(seen.get(id)),
      consentOf: (reply) =>
        Effect.gen(function* () {
          if (reply.kind !== "ERROR" || reply.code !== "consent_required" || reply.consent === undefined) {
            return yield* Effect.fail(yeaError("bad_frame", "not a consent_required reply with a consent request"))
          }
          const shown = seen.get(reply.consent.proposal)
          if (shown === undefined || service === undefined) return yield* Effect.fail(yeaError("conflict", "the consent request names a proposal this agent was never shown"))
          const consent = yield* checkConsentRequest(reply.consent, shown, service)
          return { consent, proposal: shown }
        })
    }
  })

/** The model's view of a reply from a third-party service: the hardened Lens (README, "Lens"). */
export const lensForModel = (reply: unknown): string => lensReplyHardened(reply)
