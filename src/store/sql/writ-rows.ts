// The rows of the SQL Writ executor stores (spec section 9, SQLite and PostgreSQL alike) as Schemas: every row read is decoded,
// so a corrupted store (an unknown state, a flag that is not 0 or 1, JSON that does not parse, a
// final call without its tally) is a StoreError naming what is wrong, never a wrong answer.
//
// Signed objects and results are kept as their RFC 8785 text and read back with the strict reader
// (section 1.1), so an answer from the store is byte for byte the answer first given (section 7
// step 9). Lists of identities are plain JSON arrays of strings.
import { Either, Option, ParseResult, Schema } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import { type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import type {
  AcceptedCall,
  AuditEntry,
  CallEntry,
  HeldTally,
  IssuedWrit,
  KeptAck,
  Reversal
} from "../../writ/executor/stores.js"

const JsonValue = Schema.declare((u: unknown): u is Json => u !== undefined, { identifier: "Json" })
const JsonObjectValue = Schema.declare(
  (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u),
  { identifier: "JsonObject" }
)

/** JSON kept as canonical text: decoded by the strict reader, encoded by the RFC 8785 encoder. */
const Stored = <A extends Json>(to: Schema.Schema<A>) =>
  Schema.transformOrFail(Schema.String, to, {
    strict: true,
    decode: (text, _, ast) => {
      const parsed = parseJson(text, { integersOnly: false, maxDepth: 4096 })
      return Either.isRight(parsed)
        ? ParseResult.decodeUnknown(to)(parsed.right)
        : ParseResult.fail(new ParseResult.Type(ast, text, `stored JSON does not parse: ${parsed.left.message}`))
    },
    encode: (value) => ParseResult.succeed(encodeCanonical(value, "utf16"))
  })

export const StoredJson = Stored(JsonValue)
export const StoredObject = Stored(JsonObjectValue)
const OptionalJson = Schema.OptionFromNullOr(StoredJson)
const Identities = Schema.parseJson(Schema.Array(Schema.String))
/** SQLite has no booleans: 0 or 1. */
const Flag = Schema.transform(Schema.Literal(0, 1), Schema.Boolean, {
  strict: true,
  decode: (n) => n === 1,
  encode: (b) => (b ? 1 : 0)
})

export const CallRow = Schema.Struct({
  leaf: Schema.String,
  id: Schema.String,
  call: Schema.String,
  op: Schema.String,
  acc: Schema.Int,
  standing: Flag,
  chain: Identities,
  issuers: Identities,
  exp: Schema.Int,
  reservation: Schema.NullOr(Schema.String),
  state: Schema.Literal("pending", "final"),
  tally: Schema.NullOr(StoredObject),
  res: OptionalJson
}).pipe(Schema.filter((r) => (r.state === "final") === (r.tally !== null) || "a final call has its tally, a pending one none"))
export type CallRow = typeof CallRow.Type

export const acceptedFromRow = (r: CallRow): AcceptedCall => ({
  leaf: r.leaf,
  id: r.id,
  call: r.call,
  op: r.op,
  acc: r.acc,
  standing: r.standing,
  chain: r.chain,
  issuers: r.issuers,
  exp: r.exp,
  reservation: r.reservation
})

export const callEntryFromRow = (r: CallRow): CallEntry =>
  r.state === "pending" || r.tally === null
    ? { state: "pending", accepted: acceptedFromRow(r) }
    : { state: "final", accepted: acceptedFromRow(r), tally: r.tally, res: r.res }

/** The row of a call just accepted (section 7 step 9). */
export const pendingRow = (a: AcceptedCall): CallRow => ({ ...a, state: "pending", tally: null, res: Option.none() })

export const TallyRow = Schema.Struct({
  tally: Schema.String,
  call: Schema.String,
  acc: Schema.Int,
  forward: Flag,
  chain: Identities,
  issuers: Identities,
  object: StoredObject,
  res: OptionalJson
})
/** A HeldTally is exactly a decoded row. */
export const heldFromRow = (r: typeof TallyRow.Type): HeldTally => r

export const ReversalRow = Schema.Struct({
  target: Schema.String,
  state: Schema.Literal("begun", "succeeded", "unknown"),
  call: Schema.String,
  res: OptionalJson
})
export const reversalFromRow = (r: typeof ReversalRow.Type): Reversal =>
  r.state === "succeeded" ? { state: r.state, call: r.call, res: r.res } : { state: r.state, call: r.call }

export const IssuedRow = Schema.Struct({
  leaf: Schema.String,
  id: Schema.String,
  writ: Schema.String,
  hld: Schema.String,
  above: Identities,
  above_issuers: Identities,
  object: StoredObject
})
export const issuedFromRow = (r: typeof IssuedRow.Type): IssuedWrit => ({
  leaf: r.leaf,
  id: r.id,
  writ: r.writ,
  hld: r.hld,
  above: r.above,
  aboveIssuers: r.above_issuers,
  object: r.object
})

export const ObjectRow = Schema.Struct({ object: StoredObject })

export const AckRow = Schema.Struct({ revoke: Schema.String, ack: Schema.String, object: StoredObject, res: StoredJson })
export const ackFromRow = (r: typeof AckRow.Type): KeptAck => r

const Nullable = Schema.NullOr(Schema.String)
/**
 * An audit entry, kept as JSON. Members beyond the known ones are kept as they are (the record may
 * gain members; a reader must not drop them).
 */
const AuditEntrySchema = Schema.Struct(
  {
    time: Schema.Int,
    kind: Schema.Literal("call", "revoke"),
    identity: Nullable,
    unparsed: Nullable,
    principal: Nullable,
    peer: Nullable,
    root: Nullable,
    leaf: Nullable,
    op: Nullable,
    outcome: Schema.String,
    reason: Nullable,
    signed: Nullable
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export const AuditRow = Schema.Struct({ entry: Schema.parseJson(AuditEntrySchema) })
export const auditFromRow = (r: typeof AuditRow.Type): AuditEntry => r.entry
