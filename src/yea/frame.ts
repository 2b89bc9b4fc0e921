// YEA frames (SPEC §2.1, §3, §4, §5, §7): one Effect Schema per request verb and per reply kind.
//
// These Schemas decode untrusted frames directly (DESIGN.md "Schemas are the wire"), and the JSON
// Schemas in schema/yea/ are generated from them (scripts/schema.ts). Unknown members are ignored
// (§2.1 "Receivers MUST ignore unknown fields"), which is Effect's default for structs. Every
// member that an unauthenticated peer controls is bounded here, before any handler sees it.
//
// decodeRequest is the runtime's one entry: it reads `yea`, `id` and `verb` first so that the reply
// names the right code (§2.1: an unknown verb is `bad_frame`), then the verb's Schema.
import { Effect, Either, ParseResult, Schema } from "effect"
import { RiskLevel } from "./caveat.js"
import { ConsentRequest, YeaReason, yeaError, type YeaError } from "./reason.js"
import { Proof } from "./proof.js"
import { Proposal } from "./proposal.js"
import { Receipt } from "./receipt.js"

/** §2.1: a frame MUST NOT exceed 1 MiB serialized. */
export const MAX_FRAME_BYTES = 1024 * 1024
/** Bounds on members a peer controls (ours, not the spec's; generous for honest peers). */
export const MAX_ID_LENGTH = 256
export const MAX_NAME_LENGTH = 256
export const MAX_GOAL_LENGTH = 16_384
export const MAX_GRANTS = 16
export const MAX_GRANT_LENGTH = 65_536
export const MAX_BUDGET = 1_000_000
/** Nesting allowed in a frame (the kernel reader refuses deeper text before building values). */
export const MAX_FRAME_DEPTH = 64

const Bounded = (max: number, min = 1) => Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max))

/** `"yea": 1` (§2.1). */
export const Version = Schema.Literal(1)
/** A frame id: unique among the sender's frames on the connection (§2.1). */
export const FrameId = Bounded(MAX_ID_LENGTH).annotations({ identifier: "FrameId" })
/** A params object (§4.2, §4.3): any JSON object; the capability's compact schema checks it. */
export const Params = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier: "Params" })

/** §3 common request fields. */
const common = {
  yea: Version,
  id: FrameId,
  budget: Schema.optional(Schema.Int.pipe(Schema.between(0, MAX_BUDGET))),
  grants: Schema.optional(Schema.Array(Bounded(MAX_GRANT_LENGTH)).pipe(Schema.maxItems(MAX_GRANTS))),
  proof: Schema.optional(Proof)
}

// ---------------------------------------------------------------------------------------------
// Requests (§4)

export const HelloFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("HELLO"),
  agent: Schema.optional(Schema.Struct({ name: Schema.optional(Bounded(MAX_NAME_LENGTH, 0)), key: Schema.optional(Bounded(MAX_NAME_LENGTH)) }))
}).annotations({ identifier: "HelloFrame" })

export const AskFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("ASK"),
  capability: Bounded(MAX_NAME_LENGTH),
  params: Schema.optional(Params)
}).annotations({ identifier: "AskFrame" })

export const IntentFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("INTENT"),
  capability: Bounded(MAX_NAME_LENGTH),
  goal: Schema.optional(Bounded(MAX_GOAL_LENGTH, 0)),
  params: Schema.optional(Params),
  auto: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "IntentFrame" })

export const CommitFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("COMMIT"),
  proposal: Bounded(MAX_ID_LENGTH),
  hash: Bounded(MAX_ID_LENGTH)
}).annotations({ identifier: "CommitFrame" })

export const UndoFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("UNDO"),
  receipt: Bounded(MAX_ID_LENGTH)
}).annotations({ identifier: "UndoFrame" })

export const ExpandFrame = Schema.Struct({
  ...common,
  verb: Schema.Literal("EXPAND"),
  handle: Bounded(MAX_ID_LENGTH)
}).annotations({ identifier: "ExpandFrame" })

export const RequestFrame = Schema.Union(HelloFrame, AskFrame, IntentFrame, CommitFrame, UndoFrame, ExpandFrame).annotations({
  identifier: "RequestFrame"
})
export type RequestFrame = typeof RequestFrame.Type
export type HelloFrame = typeof HelloFrame.Type
export type AskFrame = typeof AskFrame.Type
export type IntentFrame = typeof IntentFrame.Type
export type CommitFrame = typeof CommitFrame.Type
export type UndoFrame = typeof UndoFrame.Type
export type ExpandFrame = typeof ExpandFrame.Type

const BY_VERB = {
  HELLO: HelloFrame,
  ASK: AskFrame,
  INTENT: IntentFrame,
  COMMIT: CommitFrame,
  UNDO: UndoFrame,
  EXPAND: ExpandFrame
} as const

// ---------------------------------------------------------------------------------------------
// Replies (§5, §7, §8)

/** A compact parameter schema (§4.1.1): names to type strings, nested objects, `[{...}]` arrays. */
export interface ParamSchema {
  readonly [name: string]: string | ParamSchema | readonly [ParamSchema]
}
export const ParamSchema: Schema.Schema<ParamSchema> = Schema.Record({
  key: Schema.String,
  value: Schema.Union(
    Schema.String,
    Schema.suspend((): Schema.Schema<ParamSchema> => ParamSchema),
    Schema.Tuple(Schema.suspend((): Schema.Schema<ParamSchema> => ParamSchema))
  )
}).annotations({ identifier: "ParamSchema" })

/** A capability entry of a BRIEF (§4.1). */
export const Capability = Schema.Struct({
  name: Schema.String,
  kind: Schema.Literal("ask", "intent"),
  summary: Schema.optional(Schema.String),
  params: Schema.optional(ParamSchema),
  risk: Schema.optional(RiskLevel)
}).annotations({ identifier: "Capability" })
export type Capability = typeof Capability.Type

/** §8 `More`: where an elided value is and how to fetch it. */
export const More = Schema.Struct({
  handle: Schema.String,
  path: Schema.String,
  remaining: Schema.Int,
  est: Schema.Int
}).annotations({ identifier: "More" })

const reply = {
  yea: Version,
  id: FrameId,
  re: Schema.String,
  /** §5: a service's own Lens; clients ignore it and render locally. */
  lens: Schema.optional(Schema.String)
}
const more = { more: Schema.optional(Schema.Array(More)) }

export const BriefFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("BRIEF"),
  service: Schema.Struct({ id: Schema.String, name: Schema.String, summary: Schema.optional(Schema.String) }),
  capabilities: Schema.Array(Capability),
  ...more
}).annotations({ identifier: "BriefFrame" })

/** Any JSON value, present: a required member typed `any` (§5 ANSWER `data`) may still not be missing. */
const Present = Schema.Unknown.pipe(Schema.filter((v) => v !== undefined, { jsonSchema: {} }))

export const AnswerFrame = Schema.Struct({ ...reply, kind: Schema.Literal("ANSWER"), data: Present, ...more }).annotations({
  identifier: "AnswerFrame"
})

export const ProposalsFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("PROPOSALS"),
  proposals: Schema.Array(Proposal),
  ...more
}).annotations({ identifier: "ProposalsFrame" })

export const ClarifyOption = Schema.Struct({ label: Schema.String, params: Params }).annotations({ identifier: "ClarifyOption" })
export const ClarifyFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("CLARIFY"),
  question: Schema.String,
  options: Schema.Array(ClarifyOption)
}).annotations({ identifier: "ClarifyFrame" })

export const ReceiptFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("RECEIPT"),
  receipt: Receipt,
  /** §4.4, §4.5: the original receipt of an already-committed proposal or undone receipt. */
  replay: Schema.optional(Schema.Boolean),
  /** §4.3.1: the first proposal of an auto INTENT was committed. */
  auto: Schema.optional(Schema.Boolean),
  ...more
}).annotations({ identifier: "ReceiptFrame" })

/** §7 `fix`: a sentence and an optional params merge patch. */
export const Fix = Schema.Struct({ say: Schema.String, params: Schema.optional(Params) }).annotations({ identifier: "Fix" })
export type Fix = typeof Fix.Type

export const ErrorFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("ERROR"),
  code: YeaReason,
  message: Schema.String,
  fix: Schema.optional(Schema.Array(Fix)),
  need: Schema.optional(Schema.Array(Schema.Unknown)),
  consent: Schema.optional(ConsentRequest),
  retry: Schema.optional(Schema.NullOr(Schema.Int))
}).annotations({ identifier: "ErrorFrame" })

export const EventFrame = Schema.Struct({
  ...reply,
  kind: Schema.Literal("EVENT"),
  message: Schema.String,
  progress: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  data: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "EventFrame" })

export const ReplyFrame = Schema.Union(BriefFrame, AnswerFrame, ProposalsFrame, ClarifyFrame, ReceiptFrame, ErrorFrame, EventFrame).annotations({
  identifier: "ReplyFrame"
})
export type ReplyFrame = typeof ReplyFrame.Type
export type BriefFrame = typeof BriefFrame.Type
export type AnswerFrame = typeof AnswerFrame.Type
export type ProposalsFrame = typeof ProposalsFrame.Type
export type ClarifyFrame = typeof ClarifyFrame.Type
export type ReceiptFrame = typeof ReceiptFrame.Type
export type ErrorFrame = typeof ErrorFrame.Type
export type EventFrame = typeof EventFrame.Type
export type FinalReply = Exclude<ReplyFrame, EventFrame>

/** The reply body without the envelope (`yea`, `id`, `re`): what handlers produce. */
export type ReplyBody<F extends ReplyFrame = ReplyFrame> = F extends ReplyFrame ? Omit<F, "yea" | "id" | "re"> : never

// ---------------------------------------------------------------------------------------------
// Decoding

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const own = (o: Record<string, unknown>, k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined)

const firstIssue = (e: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
  const i = issues[0]
  return i === undefined ? "malformed" : `${i.path.length > 0 ? i.path.join(".") + ": " : ""}${i.message}`
}

/**
 * The `re` to answer a frame with: its `id` when that is a usable id, else "" (a frame without one
 * still gets its `bad_frame`, so the peer learns why).
 */
export const replyTo = (frame: unknown): string => {
  const id = isObject(frame) ? own(frame, "id") : undefined
  return typeof id === "string" && id.length > 0 && id.length <= MAX_ID_LENGTH ? id : ""
}

/** A request frame from an untrusted JSON value, or `bad_frame` naming what is wrong (§2.1, §7). */
export const decodeRequestEither = (frame: unknown): Either.Either<RequestFrame, YeaError> => {
  if (!isObject(frame)) return Either.left(yeaError("bad_frame", "a frame is a JSON object"))
  if (own(frame, "yea") !== 1) return Either.left(yeaError("bad_frame", 'a frame carries "yea": 1', { path: "yea" }))
  if (replyTo(frame) === "") return Either.left(yeaError("bad_frame", `a frame carries an "id" string of 1 to ${MAX_ID_LENGTH} characters`, { path: "id" }))
  const verb = own(frame, "verb")
  if (typeof verb !== "string" || !Object.prototype.hasOwnProperty.call(BY_VERB, verb)) {
    return Either.left(yeaError("bad_frame", `unknown verb ${JSON.stringify(verb) ?? "(none)"}`, { path: "verb" }))
  }
  const schema = BY_VERB[verb as keyof typeof BY_VERB] as Schema.Schema<RequestFrame, unknown>
  return Either.mapLeft(Schema.decodeUnknownEither(schema)(frame, { errors: "first" }), (e) => yeaError("bad_frame", `${verb}: ${firstIssue(e)}`))
}

export const decodeRequest = (frame: unknown): Effect.Effect<RequestFrame, YeaError> => decodeRequestEither(frame)

/** A reply frame from an untrusted service, or `bad_frame` (clients check every reply). */
export const decodeReplyEither = (frame: unknown): Either.Either<ReplyFrame, YeaError> =>
  Either.mapLeft(Schema.decodeUnknownEither(ReplyFrame)(frame, { errors: "first" }), (e) => yeaError("bad_frame", `reply: ${firstIssue(e)}`))

/** An ERROR reply body for a failure (§7): the code, message and the members §7 defines. */
export const errorBody = (e: YeaError): ReplyBody<ErrorFrame> => ({
  kind: "ERROR",
  code: e.reason,
  message: e.message,
  ...(e.fix !== undefined && e.fix.length > 0 ? { fix: e.fix } : {}),
  ...(e.need !== undefined ? { need: e.need } : {}),
  ...(e.consent !== undefined ? { consent: e.consent } : {}),
  ...(e.retry !== undefined ? { retry: e.retry } : {})
})

/** The whole frame: envelope plus body. */
export const envelope = <B extends ReplyBody>(id: string, re: string, body: B): B & { yea: 1; id: string; re: string } =>
  ({ yea: 1, id, re, ...body }) as B & { yea: 1; id: string; re: string }

/** Whether a reply kind ends its request (§2.2: EVENT is the only non-final kind). */
export const isFinal = (frame: { readonly kind?: unknown }): boolean => frame.kind !== "EVENT"
