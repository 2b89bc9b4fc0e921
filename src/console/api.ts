// The console's JSON wire: one Schema per object the server answers with or reads. The server
// decodes every query and body with these and encodes every answer with them; the page imports
// only their types (src/console/web), so the bundle carries no Schema code.
import { Schema } from "effect"

const Str = Schema.String
const NullStr = Schema.NullOr(Schema.String)
const Int = Schema.Int

// ---------------------------------------------------------------------------------------------
// Audit (Writ section 9.3)

/** One audit entry as the executor wrote it (src/writ/executor/stores.ts AuditEntry), with its row number. */
export const AuditRowView = Schema.Struct({
  seq: Int,
  time: Int,
  kind: Schema.Literal("call", "revoke"),
  identity: NullStr,
  unparsed: NullStr,
  principal: NullStr,
  peer: NullStr,
  root: NullStr,
  leaf: NullStr,
  op: NullStr,
  outcome: Str,
  reason: NullStr,
  signed: NullStr
})
export type AuditRowView = typeof AuditRowView.Type

/** The entry member of a stored audit row (the `entry` column's JSON text). */
export const StoredAuditEntry = Schema.parseJson(AuditRowView.pipe(Schema.omit("seq")))

/** A row of `writ_audit` as read. */
export const AuditTableRow = Schema.Struct({ seq: Int, entry: Schema.String })

export const AuditSort = Schema.Literal("seq", "time", "kind", "outcome", "reason", "op", "principal")
export type AuditSort = typeof AuditSort.Type

const Bounded = (n: number) => Schema.String.pipe(Schema.maxLength(n))
const IntParam = Schema.NumberFromString.pipe(Schema.int())

/** The query string of `GET /api/audit` (every member optional; empty strings mean "any"). */
export const AuditQuery = Schema.Struct({
  kind: Schema.optional(Schema.Literal("call", "revoke")),
  outcome: Schema.optional(Bounded(32)),
  reason: Schema.optional(Bounded(64)),
  op: Schema.optional(Bounded(256)),
  principal: Schema.optional(Bounded(256)),
  since: Schema.optional(IntParam),
  until: Schema.optional(IntParam),
  sort: Schema.optional(AuditSort),
  dir: Schema.optional(Schema.Literal("asc", "desc")),
  /** The keyset cursor: the `next` of the page before. */
  after: Schema.optional(Bounded(1024)),
  limit: Schema.optional(IntParam.pipe(Schema.between(1, 500)))
})
export type AuditQuery = typeof AuditQuery.Type

export const AuditPage = Schema.Struct({
  rows: Schema.Array(AuditRowView),
  /** Cursor of the next page, null at the end. */
  next: NullStr
})
export type AuditPage = typeof AuditPage.Type

export const AuditCount = Schema.Struct({ count: Int })
export type AuditCount = typeof AuditCount.Type

// ---------------------------------------------------------------------------------------------
// Tally trees (Writ sections 6.2 and 4)

export const BoundView = Schema.Struct({ name: Str, text: Str })
export type BoundView = typeof BoundView.Type

/** One bound name across a chain: its text under each writ, root first (null where absent). */
export const NarrowingRow = Schema.Struct({ name: Str, values: Schema.Array(NullStr), narrowedAt: Schema.Array(Int) })
export type NarrowingRow = typeof NarrowingRow.Type

export const WritView = Schema.Struct({ id: Str, iss: Str, hld: Str, exp: Int, bounds: Schema.Array(BoundView) })
export type WritView = typeof WritView.Type

export interface HopView {
  readonly path: string
  readonly op: string
  readonly st: string
  readonly err: string | null
  readonly used: ReadonlyArray<{ readonly name: string; readonly amount: number }>
  readonly signer: string | null
  /** Section 6.2 for the subtree this hop heads (see tally-view.ts for a sub-hop's context). */
  readonly verdict: "valid" | "signed_unauthorized" | "unverifiable" | "unchecked"
  readonly reason: string | null
  readonly detail: string | null
  /** The section 6.2 verdict fails first at this hop. */
  readonly failsHere: boolean
  readonly tally: string
  readonly writ: string
  readonly acc: number
  /** The chain from the root to the writ this hop ran under. */
  readonly chain: ReadonlyArray<WritView>
  readonly narrowing: ReadonlyArray<NarrowingRow>
  readonly sub: ReadonlyArray<HopView>
}

export const HopView: Schema.Schema<HopView> = Schema.Struct({
  path: Str,
  op: Str,
  st: Str,
  err: NullStr,
  used: Schema.Array(Schema.Struct({ name: Str, amount: Schema.Number })),
  signer: NullStr,
  verdict: Schema.Literal("valid", "signed_unauthorized", "unverifiable", "unchecked"),
  reason: NullStr,
  detail: NullStr,
  failsHere: Schema.Boolean,
  tally: Str,
  writ: Str,
  acc: Schema.Number,
  chain: Schema.Array(WritView),
  narrowing: Schema.Array(NarrowingRow),
  sub: Schema.Array(Schema.suspend((): Schema.Schema<HopView> => HopView))
})

export const TreeView = Schema.Struct({
  source: Str,
  /** Section 6.2: valid, signed_unauthorized, unverifiable; `unchecked` without the call. */
  verdict: Schema.Literal("valid", "signed_unauthorized", "unverifiable", "unchecked"),
  reason: NullStr,
  path: NullStr,
  detail: NullStr,
  root: HopView
})
export type TreeView = typeof TreeView.Type

/** `POST /api/tally`: a tally or answer file's text, and optionally the call it answers. */
export const TreeRequest = Schema.Struct({
  name: Bounded(256),
  tally: Bounded(1_048_576),
  call: Schema.optional(Bounded(262_144))
})
export type TreeRequest = typeof TreeRequest.Type

export const CallSummary = Schema.Struct({ leaf: Str, id: Str, op: Str, acc: Int, state: Str, st: NullStr, reason: NullStr })
export type CallSummary = typeof CallSummary.Type
export const CallList = Schema.Struct({ calls: Schema.Array(CallSummary), next: NullStr })
export type CallList = typeof CallList.Type

// ---------------------------------------------------------------------------------------------
// Budgets and the ledger

// Spend (src/console/spend.ts): exact decimal amounts as text, each in one unit (USD, tokens,
// uses, a YEA measure's unit, `writ:NAME` for a Writ bound's integers), never summed across units.

export const SpendSource = Schema.Literal("ledger", "store")
export type SpendSource = typeof SpendSource.Type
export const SpendBucket = Schema.Literal("minute", "hour", "day")
export type SpendBucket = typeof SpendBucket.Type

const spendMembers = { source: SpendSource, protocol: Str, principal: Str, budget: Str, unit: Str, amount: Str, count: Int }
/** What one principal spent against one budget in one unit within one bucket (its start, ISO text). */
export const SpendPoint = Schema.Struct({ bucket: Str, ...spendMembers })
export type SpendPoint = typeof SpendPoint.Type
/** The same over the whole record. */
export const SpendTotal = Schema.Struct(spendMembers)
export type SpendTotal = typeof SpendTotal.Type
/** A principal's label: its name from a key file (`--keys`), or a short form of its id. */
export const PrincipalLabel = Schema.Struct({ id: Str, label: Str, named: Schema.Boolean })
export type PrincipalLabel = typeof PrincipalLabel.Type

/** All spend in one unit from one record, and its part per protocol (exact sums). */
export const UnitTotal = Schema.Struct({
  source: SpendSource,
  unit: Str,
  amount: Str,
  count: Int,
  protocols: Schema.Array(Schema.Struct({ protocol: Str, amount: Str, count: Int }))
})
export type UnitTotal = typeof UnitTotal.Type

export const SpendView = Schema.Struct({
  bucket: SpendBucket,
  units: Schema.Array(UnitTotal),
  sources: Schema.Array(SpendSource),
  points: Schema.Array(SpendPoint),
  totals: Schema.Array(SpendTotal),
  principals: Schema.Array(PrincipalLabel),
  /** What the view could not count, in words. */
  notes: Schema.Array(Str)
})
export type SpendView = typeof SpendView.Type

/** The query string of `GET /api/spend`. */
export const SpendQuery = Schema.Struct({ bucket: Schema.optional(SpendBucket) })

export const LimitView = Schema.Struct({ key: Str, unit: Str, limit: Str, used: Str, remaining: Str })
export type LimitView = typeof LimitView.Type

/** The executor store's `count` and `total` limits, a page at a time (cursor: the last key). */
export const StoreLimits = Schema.Struct({ limits: Schema.Array(LimitView), next: NullStr })
export type StoreLimits = typeof StoreLimits.Type

export const ChainVerdict = Schema.Struct({ ok: Schema.Boolean, lines: Int, head: NullStr, reason: NullStr, detail: NullStr })
export type ChainVerdict = typeof ChainVerdict.Type

export const StatsRowView = Schema.Struct({ protocol: Str, principal: Str, reason: Str, count: Int, tokens: Int, usd: Str })
export const Sums = Schema.Struct({ count: Int, tokens: Int, usd: Str })
export const ReplayView = Schema.Struct({
  policy: Str,
  actions: Int,
  unchanged: Int,
  newly_denied: Sums,
  newly_allowed: Sums,
  by_reason: Schema.Array(Schema.Struct({ reason: Str, count: Int, tokens: Int, usd: Str })),
  note: Str
})
export type ReplayView = typeof ReplayView.Type

export const LedgerView = Schema.Struct({
  ledger: Str,
  chain: ChainVerdict,
  stats: Schema.Struct({ rows: Schema.Array(StatsRowView), summary: Str }),
  limits: Schema.Array(LimitView),
  decisions: Schema.Array(Schema.Struct({ protocol: Str, reason: Str, count: Int })),
  replay: Schema.NullOr(ReplayView)
})
export type LedgerView = typeof LedgerView.Type

/** One stored ledger line, in a few words (`GET /api/ledger/lines`). */
export const LedgerLine = Schema.Struct({ seq: Int, at: Str, type: Str, principal: NullStr, summary: Str })
export type LedgerLine = typeof LedgerLine.Type
/** A page of lines; `next` is the cursor (the last seq), null at the end. */
export const LedgerLines = Schema.Struct({ lines: Schema.Array(LedgerLine), next: NullStr })
export type LedgerLines = typeof LedgerLines.Type
export const LedgerLinesQuery = Schema.Struct({
  after: Schema.optional(IntParam.pipe(Schema.greaterThanOrEqualTo(-1))),
  limit: Schema.optional(IntParam.pipe(Schema.between(1, 500)))
})

/** What the page asks first: which views have data behind them. */
export const ConsoleInfo = Schema.Struct({ store: NullStr, ledger: NullStr, policy: NullStr, names: Schema.Array(PrincipalLabel) })
export type ConsoleInfo = typeof ConsoleInfo.Type

export const ErrorBody = Schema.Struct({ error: Str, detail: Str })
