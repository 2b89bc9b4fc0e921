// Writ revocation at the gateway (spec section 9.1, section 7 step 7): the revokes it has
// recorded, in the gateway's own store beside its keys (SQLite file or PostgreSQL schema), so every
// gateway process on that store reads the same revocations. A revoke is recorded by
// `mandate gateway writ-revoke` against the store (as `gateway keys revoke` withdraws a key), and
// a running gateway reads the store on every Writ call's step 7: a revoke recorded by any process
// (or by the CLI) binds the next call of every process, with no cache to go stale (issue 32).
import { Context, Effect, Schema } from "effect"
import type { StoreError } from "../accounting/store-error.js"
import { verifyRevoke } from "../writ/revoke.js"
import type { WritError } from "../writ/reason.js"
import type { ObjectInput } from "../writ/verify.js"
import type { WritExecutor } from "./writ-budget.js"

/** One recorded revoke (a row of gateway_writ_revokes): section 9's revoke store. */
export const RevokeRow = Schema.Struct({
  /** The revoke object's identity. */
  revoke: Schema.String,
  /** The revoked writ's identity, or "*" for every writ `iss` issued. */
  writ: Schema.String,
  iss: Schema.String,
  /** The revoked writ's `exp` (section 9: kept until then); null for a key-wide revoke (kept for good). */
  exp: Schema.NullOr(Schema.Number),
  /** When the gateway recorded it, seconds by its clock. */
  rcv: Schema.Number
})
export type RevokeRow = typeof RevokeRow.Type

export interface GatewayRevokesShape {
  /** Appends one revoke; never rewrites another (section 12). */
  readonly record: (row: RevokeRow) => Effect.Effect<void, StoreError>
  /** Section 7 step 7: whether one of `writs` is revoked by identity, or one of `issuers` key-wide. */
  readonly covers: (writs: ReadonlyArray<string>, issuers: ReadonlyArray<string>) => Effect.Effect<boolean, StoreError>
}

export class GatewayRevokes extends Context.Tag("mandate/gateway/GatewayRevokes")<GatewayRevokes, GatewayRevokesShape>() {}

/**
 * Section 9.1: verifies the revoke (steps 1 to 4; an invalid revoke is not recorded and changes
 * nothing) and records it at `now` (seconds). What it withdrew is refused `revoked` from the next
 * Writ call on, the writ and every writ below it.
 */
export const recordRevoke = (input: ObjectInput, now: number): Effect.Effect<RevokeRow, WritError | StoreError, GatewayRevokes> =>
  Effect.gen(function*() {
    const { chain, revoke } = yield* verifyRevoke(input)
    const row: RevokeRow = {
      revoke: revoke.id, writ: revoke.value.writ, iss: revoke.value.iss,
      exp: chain.length > 0 ? chain[chain.length - 1].value.exp : null, rcv: now
    }
    yield* (yield* GatewayRevokes).record(row)
    return row
  })

/** The executor with step 7 read from `revokes` (unless its configuration already says how). */
export const withRevokes = (exec: WritExecutor, revokes: GatewayRevokesShape): WritExecutor =>
  exec.config.revoked !== undefined ? exec : { ...exec, config: { ...exec.config, revoked: revokes.covers } }
