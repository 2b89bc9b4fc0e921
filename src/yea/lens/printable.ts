/**
 * Printable escaping of untrusted text (conformance/printable.json).
 *
 * Lens is read by a model and, in approval prompts, by a human. Text written by a service (a
 * summary, a target, a message) must not be able to forge a line (`\n`), rewrite a terminal line
 * (`\r`, ESC sequences), reorder what is shown (bidi controls) or hide characters (zero-width and
 * other default-ignorable code points, tag characters). Every such code point is written as
 * `\u{hex}` (lowercase, no padding), so the reader sees that it is there.
 *
 * Escaped: control characters (Cc) other than TAB, format characters (Cf), lone surrogates (Cs),
 * the line and paragraph separators (Zl, Zp), and every Default_Ignorable_Code_Point except the
 * emoji variation selectors U+FE00–U+FE0F, which printable.json keeps (`❤️`, `☺︎`). Letters of every
 * script, marks, symbols and ordinary spaces stay literal. Private-use and unassigned code points
 * (outside the default-ignorable ranges) stay literal: the vectors do not pin them and their
 * classification changes with the Unicode version.
 */

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u

/** True when the code point must be escaped by {@link printable}. */
export const isUnprintable = (cp: number): boolean => {
  if (cp === 0x09) return false // TAB is visible whitespace (printable.json keeps it)
  if (cp >= 0xfe00 && cp <= 0xfe0f) return false // emoji/text presentation selectors
  return UNSAFE.test(String.fromCodePoint(cp))
}

/** Fast path: nothing to do for plain printable ASCII. */
const PLAIN = /^[\x20-\x7e\t]*$/

/** Escape every unprintable code point of `text` as `\u{hex}`. */
export const printable = (text: string): string => {
  if (PLAIN.test(text)) return text
  let out = ""
  // for..of walks code points; a lone surrogate comes out on its own and is escaped (Cs).
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    out += isUnprintable(cp) ? `\\u{${cp.toString(16)}}` : ch
  }
  return out
}
