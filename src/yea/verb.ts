// The request verbs of SPEC §4. A receiver that gets any other verb replies `bad_frame` (§2.1).
import { Schema } from "effect"

export const Verb = Schema.Literal("HELLO", "ASK", "INTENT", "COMMIT", "UNDO", "EXPAND")
export type Verb = typeof Verb.Type

export const isVerb = Schema.is(Verb)
