/**
 * `EXPAND` slices (SPEC §4.6, §8): the remainder behind a handle comes back as an `ANSWER` whose
 * data is `{"items": [...]}` for an array or `{"text": "..."}` for a string, fitted to the
 * request's budget like any reply, so it may carry further `more` handles (paths `data.items`,
 * `data.text`). Keeping handles (and binding them to the requester's key) is the service's job;
 * this module only cuts the slice.
 */
import type { Effect } from "effect"
import type { Random } from "../../kernel/services.js"
import { type Elided, type Fitted, fitReply, fitReplyEffect } from "./budget.js"

/** The unfitted ANSWER body for an elided remainder. */
export const expandBody = (e: Elided): { readonly kind: "ANSWER"; readonly data: unknown } => ({
  kind: "ANSWER",
  data: e.kind === "items" ? { items: e.items } : { text: e.text }
})

/** The next slice of an elided value within `budget`, handles from a synchronous source. */
export const expandSlice = (e: Elided, budget: number, nextHandle: () => string): Fitted =>
  fitReply(expandBody(e), budget, nextHandle)

/** {@link expandSlice} with handles drawn from the `Random` service. */
export const expandSliceEffect = (e: Elided, budget: number): Effect.Effect<Fitted, never, Random> =>
  fitReplyEffect(expandBody(e), budget)
