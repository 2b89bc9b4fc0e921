// The typed phrase (SPEC-approval §3, approval.json `phrases` and `phraseChecks`). An accepted form
// counts as approval only when the typed text is the plan's phrase: a bare accept or an empty form
// never counts, because some clients auto-accept forms without showing them.
//
// Matching trims what a keyboard or a paste adds around a word (ASCII white space, U+00A0 and the
// BOM), composes (NFC: `cafe` + U+0301 is `café`) and lowercases (full Unicode lowercase, so Greek
// final sigma matches; no case folding, so `STRASSE` is not `straße` and `İ` is not `i`). Anything
// else, such as an em space or a zero-width space, is part of the text and must match exactly.
import { Effect } from "effect"
import { isUnprintable } from "../lens/printable.js"
import { invalidPhrase, type InvalidPhrase } from "./reason.js"

/** The phrase when the author gives none, or a blank one. */
export const DEFAULT_PHRASE = "approve"

const EDGES = /^[\t\n\v\f\r \u00a0\ufeff]+|[\t\n\v\f\r \u00a0\ufeff]+$/g
const BLANK = /^[ \t]*$/

const normal = (s: string): string => s.replace(EDGES, "").normalize("NFC").toLowerCase()

/** A phrase the person can type: no control (TAB aside), format, separator or ignorable characters. */
const typeable = (phrase: string): boolean => {
  for (const ch of phrase) if (isUnprintable(ch.codePointAt(0)!)) return false
  return true
}

/**
 * The phrase to ask for: `approve` when absent or blank, the phrase itself when typeable, and
 * `InvalidPhrase` otherwise (the call fails as a tool error, SPEC-mcp-ts `confirmWith`).
 */
export const effectivePhrase = (phrase: string | undefined): Effect.Effect<string, InvalidPhrase> => {
  if (phrase === undefined || BLANK.test(phrase)) return Effect.succeed(DEFAULT_PHRASE)
  return typeable(phrase) ? Effect.succeed(phrase) : Effect.fail(invalidPhrase(`the phrase ${JSON.stringify(phrase)} can't be typed`))
}

/** The phrase shown in a form: blank falls back to `approve`; the text is escaped where shown. */
export const shownPhrase = (phrase: string | undefined): string =>
  phrase === undefined || BLANK.test(phrase) ? DEFAULT_PHRASE : phrase

/** Whether `typed` approves a plan whose phrase is `phrase` (an untypeable phrase never matches). */
export const phraseMatches = (typed: unknown, phrase: string | undefined): boolean => {
  if (typeof typed !== "string") return false
  const want = phrase === undefined || BLANK.test(phrase) ? DEFAULT_PHRASE : phrase
  if (!typeable(want)) return false
  const got = normal(typed)
  return got !== "" && got === normal(want)
}
