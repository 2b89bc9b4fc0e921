// The durable state of a YEA service, as services the protocol declares and the stores implement
// (src/store/{memory,sqlite,postgres}/yea-*.ts). One tag per concept, each with its key and lifetime:
//
//   YeaProposals   proposal id -> the proposal, its action, requester and principal (§4.3, §4.4)
//                  kept until the proposal expires plus the longest undo it could open; swept after.
//   YeaCommits     proposal id -> the commit claim and its receipt; receipt id -> the same (§4.4, §4.5)
//                  kept for the service's life: a replay must find the original receipt.
//   YeaAutoMemory  (proof.key, frame id) -> the reply to an auto INTENT (§4.3.1), at least 900 s
//                  after the later of its arrival and proof.ts.
//   YeaHandles     handle -> the elided remainder and the holder key (§4.6, §8), at least 10 minutes.
//
// Writes that must happen together (a commit claim with its `total` reservation) run inside one
// `Atomic.transaction`, so every store of one Layer must join the Atomic of that Layer.
import { Context, type Effect, type Option, Schema } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import { Proposal } from "./proposal.js"
import { YeaReason } from "./reason.js"
import { Receipt } from "./receipt.js"

/** A proposal as the service keeps it (row schema shared by every store). */
export const ProposalRecord = Schema.Struct({
  proposal: Proposal,
  /** What the capability's commit handler runs: plain JSON chosen by the plan (survives restarts). */
  action: Schema.Unknown,
  /** The holder key whose verified proof was on the INTENT (§4.4); absent: never committable. */
  requester: Schema.optional(Schema.String),
  /** The principal of the grant that authorized the INTENT, if one did (§4.4). */
  principal: Schema.optional(Schema.String),
  /** Unix seconds after which the record may be swept. */
  keepUntil: Schema.Int
}).annotations({ identifier: "ProposalRecord" })
export type ProposalRecord = typeof ProposalRecord.Type

export interface YeaProposalsService {
  readonly put: (record: ProposalRecord) => Effect.Effect<void, StoreError>
  readonly get: (id: string) => Effect.Effect<Option.Option<ProposalRecord>, StoreError>
  /** Drops records whose keepUntil has passed. */
  readonly sweep: (now: number) => Effect.Effect<void, StoreError>
}
export class YeaProposals extends Context.Tag("mandate/yea/Proposals")<YeaProposals, YeaProposalsService>() {}

/**
 * How a commit that ended without a receipt ended, as every later COMMIT of its proposal answers
 * it (§7 code and its one sentence): `failed` when the capability refused (nothing happened),
 * `unknown` when its effect may have reached the outside world (§4.4 "MUST NOT execute again").
 */
export const CommitOutcome = Schema.Struct({
  state: Schema.Literal("failed", "unknown"),
  code: YeaReason,
  message: Schema.String
}).annotations({ identifier: "CommitOutcome" })
export type CommitOutcome = typeof CommitOutcome.Type

/**
 * A commit of one proposal: claimed before it runs; then done with its receipt, or failed or
 * unknown with the outcome every later COMMIT answers. It never runs twice.
 */
export const CommitRecord = Schema.Struct({
  proposal: Schema.String,
  state: Schema.Literal("pending", "done", "failed", "unknown"),
  /** The runtime instance that claimed it: a pending claim of another instance was interrupted. */
  owner: Schema.String,
  requester: Schema.String,
  principal: Schema.String,
  /** The plan's action, kept for UNDO after the proposal itself is swept. */
  action: Schema.Unknown,
  receipt: Schema.optional(Receipt),
  /** For `failed` and `unknown`: what the commit's replays answer. */
  outcome: Schema.optional(CommitOutcome),
  /** The UNDO of its receipt (§4.5): pending while it runs, then its receipt. */
  undo: Schema.optional(Schema.Struct({
    state: Schema.Literal("pending", "done", "failed", "unknown"),
    owner: Schema.String,
    receipt: Schema.optional(Receipt),
    /** For `failed` and `unknown`: what the UNDO's replays answer (it never runs twice either). */
    outcome: Schema.optional(CommitOutcome)
  }))
}).annotations({ identifier: "CommitRecord" })
export type CommitRecord = typeof CommitRecord.Type

export interface YeaCommitsService {
  /** Claims the commit of `record.proposal`; None when claimed now, else the existing record. */
  readonly claim: (record: CommitRecord) => Effect.Effect<Option.Option<CommitRecord>, StoreError>
  /** Writes the receipt: the commit is done. */
  readonly complete: (proposal: string, receipt: Receipt) => Effect.Effect<void, StoreError>
  /** Records how a commit ended without a receipt: its claim stays, so it never runs again. */
  readonly settle: (proposal: string, outcome: CommitOutcome) => Effect.Effect<void, StoreError>
  readonly byProposal: (proposal: string) => Effect.Effect<Option.Option<CommitRecord>, StoreError>
  readonly byReceipt: (receipt: string) => Effect.Effect<Option.Option<CommitRecord>, StoreError>
  /** Claims the UNDO of the receipt of `proposal`; None when claimed now, else the record as it was. */
  readonly claimUndo: (proposal: string, owner: string) => Effect.Effect<Option.Option<CommitRecord>, StoreError>
  readonly completeUndo: (proposal: string, receipt: Receipt) => Effect.Effect<void, StoreError>
  /** Records how an UNDO ended without a reversal receipt: its claim stays, so it never runs again. */
  readonly settleUndo: (proposal: string, outcome: CommitOutcome) => Effect.Effect<void, StoreError>
}
export class YeaCommits extends Context.Tag("mandate/yea/Commits")<YeaCommits, YeaCommitsService>() {}

/** The remembered reply to an auto INTENT. `reply` is absent while the first request runs. */
export const AutoRecord = Schema.Struct({
  key: Schema.String,
  frame: Schema.String,
  until: Schema.Int,
  reply: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "AutoRecord" })
export type AutoRecord = typeof AutoRecord.Type

export interface YeaAutoMemoryService {
  /** Remembers (key, frame); None when new, else the existing record. */
  readonly remember: (record: AutoRecord) => Effect.Effect<Option.Option<AutoRecord>, StoreError>
  /** Stores the final reply body for (key, frame). */
  readonly complete: (key: string, frame: string, reply: unknown) => Effect.Effect<void, StoreError>
  readonly sweep: (now: number) => Effect.Effect<void, StoreError>
}
export class YeaAutoMemory extends Context.Tag("mandate/yea/AutoMemory")<YeaAutoMemory, YeaAutoMemoryService>() {}

/** An EXPAND handle: the remainder behind it and who may expand it. */
export const HandleRecord = Schema.Struct({
  handle: Schema.String,
  /** Path and remainder (lens/budget.ts `Elided`). */
  elided: Schema.Unknown,
  /** §4.6: the holder key of the request that created it, when that request carried a verified proof. */
  holder: Schema.optional(Schema.String),
  expires: Schema.Int
}).annotations({ identifier: "HandleRecord" })
export type HandleRecord = typeof HandleRecord.Type

export interface YeaHandlesService {
  readonly put: (records: ReadonlyArray<HandleRecord>) => Effect.Effect<void, StoreError>
  readonly get: (handle: string) => Effect.Effect<Option.Option<HandleRecord>, StoreError>
  readonly sweep: (now: number) => Effect.Effect<void, StoreError>
}
export class YeaHandles extends Context.Tag("mandate/yea/Handles")<YeaHandles, YeaHandlesService>() {}

export type YeaState = YeaProposals | YeaCommits | YeaAutoMemory | YeaHandles
