// Row reading for the SQL YEA stores: a `record` column holding the record's JSON, decoded by its
// Schema (a row that does not decode is the store's failure, never a crash), and the mapping of
// every driver failure to the shared StoreError.
import { SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type StoreError, storeError } from "../../accounting/store-error.js"

export const recordRow = <A, I>(record: Schema.Schema<A, I>) => Schema.Struct({ record: Schema.parseJson(record) })

export const op = <A>(name: string, eff: Effect.Effect<A, unknown>): Effect.Effect<A, StoreError> =>
  Effect.mapError(eff, (e) => (typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "StoreError" ? (e as StoreError) : storeError(`yea.${name}`)(e)))

export const json = <A, I>(record: Schema.Schema<A, I>) => Schema.encodeSync(Schema.parseJson(record))

export { SqlSchema }
