/**
 * `EXPAND` slices (SPEC §4.6, §8): the remainder behind a handle comes back as an `ANSWER` whose
 * data is `{"items": [...]}` for an array or `{"text": "..."}` for a string, fitted to the
 * request's budget like any reply, so it may carry further `more` handles (paths `data.items`,
 * `data.text`). The items of a list root (proposals, capabilities) are sliced whole: the slice
 * drops trailing items but never elides inside one. Keeping handles (and binding them to the requester's key) is the service's job;
 * this module only cuts the slice.
 */
import type { Effect } from "effect"
import type { RandomBytes } from "../../kernel/services.js"
import { type Elided, type FitOptions, type Fitted, fitReply, fitReplyEffect } from "./budget.js"

/** Proposals and capabilities stay whole in their slices too (design.md, "Elision safety"). */
const sliceOptions = (e: Elided): FitOptions => ({ wholeItems: e.kind === "items" && e.whole })

/** The unfitted ANSWER body for an elided remainder. */
export const expandBody = (e: Elided): { readonly kind: "ANSWER"; readonly data: unknown } => ({
  kind: "ANSWER",
  data: e.kind === "items" ? { items: e.items } : { text: e.text }
})

/** The next slice of an elided value within `budget`, handles from a synchronous source. */
export const expandSlice = (e: Elided, budget: number, nextHandle: () => string): Fitted =>
  fitReply(expandBody(e), budget, nextHandle, sliceOptions(e))

/** {@link expandSlice} with handles drawn from the `RandomBytes` service. */
export const expandSliceEffect = (e: Elided, budget: number): Effect.Effect<Fitted, never, RandomBytes> =>
  fitReplyEffect(expandBody(e), budget, sliceOptions(e))
