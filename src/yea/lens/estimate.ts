/**
 * The shared token estimate of SPEC §8: the number of non-overlapping leftmost matches of
 * `[A-Za-z]+|[0-9]{1,3}|\n {2,}|[^ \t\n\r\f\vA-Za-z0-9]` over the text's code points. The `u` flag
 * makes the negated class consume one whole code point (an astral character counts once, not
 * twice as two UTF-16 units would).
 */
const TOKEN = /[A-Za-z]+|[0-9]{1,3}|\n {2,}|[^ \t\n\r\f\vA-Za-z0-9]/gu

export const est = (text: string): number => {
  let n = 0
  TOKEN.lastIndex = 0
  while (TOKEN.exec(text) !== null) n++
  return n
}
