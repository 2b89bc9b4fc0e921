// The codes the Writ bindings share (docs/bindings.md), defined once: they are outside the table of
// spec section 11, and each binding's own union (file, A2A, gate, MCP) takes the ones it uses from
// here rather than spelling them again.
import { Schema } from "effect"

/** No Writ call where the binding needs one (a message, a header, a file beside the work, a tool call). */
export const MissingCall = Schema.Literal("missing_call")
/** No tally where the answer must carry one: the work does not count as done. */
export const MissingTally = Schema.Literal("missing_tally")
/** The answer and its tally disagree (its state, its result body). */
export const ResultMismatch = Schema.Literal("result_mismatch")

/**
 * An executor's implementation code (section 11, last paragraph: namespaced), carried through a
 * binding as the executor gave it, e.g. `mandate/store_unavailable` in an unsigned answer.
 */
export const ImplementationCode = Schema.TemplateLiteral("mandate/", Schema.String)
