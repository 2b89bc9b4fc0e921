// The proxy's receipts (docs/bindings.md: "keeps every verified tally in -receipts"): one JSON line
// per verified result, `{"tool","call","tally","res"?}`, appended in the order results verified.
// Only what verified is kept; a refused or canceled result never is. A call whose server dropped
// before answering (it may have run) is kept as a line with no tally, `"unanswered"`. A service, so the protocol
// path never touches the file system: the file Layer goes through @effect/platform's FileSystem.
import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import type { JsonObject } from "../../kernel/json.js"

export interface ReceiptsService {
  readonly keep: (receipt: JsonObject) => Effect.Effect<void>
}

export class Receipts extends Context.Tag("mandate/writ-mcp/Receipts")<Receipts, ReceiptsService>() {
  /** Appends to `path` (created if absent). A write that fails is logged, not fatal: the result
   * was verified and is still answered, and the server keeps the tally (`sys/tallies`). */
  static file(path: string): Layer.Layer<Receipts, never, FileSystem.FileSystem> {
    return Layer.effect(Receipts, Effect.map(FileSystem.FileSystem, (fs) => ({
      keep: (receipt) =>
        fs.writeFileString(path, encodeCanonical(receipt, "utf16") + "\n", { flag: "a" }).pipe(
          Effect.catchAll((e) => Effect.logError(`receipt not written to ${path}: ${e.message}`))
        )
    })))
  }
  /** Kept in memory, readable through `read` (tests). */
  static memory: Effect.Effect<{ readonly layer: Layer.Layer<Receipts>; readonly read: Effect.Effect<ReadonlyArray<JsonObject>> }> =
    Effect.map(Ref.make<ReadonlyArray<JsonObject>>([]), (ref) => ({
      layer: Layer.succeed(Receipts, { keep: (r) => Ref.update(ref, (rs) => [...rs, r]) }),
      read: Ref.get(ref)
    }))
  static none: Layer.Layer<Receipts> = Layer.succeed(Receipts, { keep: () => Effect.void })
}

const JsonObjectSchema = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** One line of the receipts file: the tool, the call's identity (spec 1.5), the verified tally and
 * the body its `out` commits to (absent when `out` is null). */
export const VerifiedReceipt = Schema.Struct({
  tool: Schema.String,
  call: Schema.String,
  tally: JsonObjectSchema,
  res: Schema.optional(JsonObjectSchema)
})

/** A call sent whose server dropped before it answered (./proxy.ts with `reconnect`): it may have
 * run (the executor's `unknown_outcome`, spec 7.3), no tally came, and it is never sent again. */
export const UnansweredReceipt = Schema.Struct({
  tool: Schema.String,
  call: Schema.String,
  unanswered: Schema.Literal("unreachable_server")
})

export const Receipt = Schema.Union(VerifiedReceipt, UnansweredReceipt)
export type Receipt = typeof Receipt.Type

/** The receipt of a verified result, as the line's JSON. */
export const receipt = (tool: string, callId: string, tally: JsonObject, body: JsonObject | undefined): JsonObject =>
  Schema.encodeSync(VerifiedReceipt)({ tool, call: callId, tally, ...(body === undefined ? {} : { res: body }) }) as JsonObject

/** The record of a call its server dropped with no answer. */
export const unansweredReceipt = (tool: string, callId: string): JsonObject =>
  Schema.encodeSync(UnansweredReceipt)({ tool, call: callId, unanswered: "unreachable_server" })
