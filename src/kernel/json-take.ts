// A member's value offered to its caller as text before it is read (issue 30, reused chains): the
// Writ executor holds chains it verified under a hash of their exact text, and a call under a held
// chain carries those very bytes again. Reading them again (values, spans, rule checks) was the
// largest cost of such a call. The reader finds the value's extent by a bracket scan and offers the
// text; when its owner holds a value read strictly from exactly that text, the reader takes it and
// goes on after it. Same text, same reading (section 1.1's rules depend on nothing else but the
// depth at which the text sits, which the owner reports and the reader checks).
/** A value its owner read strictly from exactly the offered text before. */
export interface TakenValue {
  /** The value (a JSON array or object, as the reader builds them), shared: it must never be
   * mutated, by anyone. Typed `object` so this module needs nothing of the reader's. */
  readonly value: object
  /** Whether the text is canonical (Writ section 1.2), as the first reading found. */
  readonly canonical: boolean
  /** The nesting of the text itself (the value's container is level 1). */
  readonly depth: number
}

/** What the owner answers for an offered text: the value when it holds one, and a note it wants
 * back beside the value read (a digest it already took, say), in `Reading.notes`. */
export interface Offered {
  readonly taken?: TakenValue
  readonly note: unknown
}

/** Which member is offered: the member `member` of an object at nesting level `level`, when its
 * value starts with `[`. */
export interface Take {
  readonly member: string
  readonly level: number
  readonly offer: (text: string) => Offered
}

/**
 * One past the end of the array or object starting at `from` in `s`, counting brackets outside
 * string literals (a backslash skips the character after it), or -1 when the text ends first. For
 * valid JSON this is the value's exact extent; for anything else it is some extent whose text the
 * owner cannot hold (it holds only text that read strictly), so the reader then reads it as usual.
 */
export const skipContainer = (s: string, from: number): number => {
  let depth = 0
  let i = from
  const n = s.length
  while (i < n) {
    const c = s.charCodeAt(i++)
    if (c === 0x22) {
      while (i < n) {
        const d = s.charCodeAt(i++)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) depth++
    else if (c === 0x5d || c === 0x7d) {
      if (--depth === 0) return i
    }
  }
  return -1
}
