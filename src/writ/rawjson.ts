// Locating values inside a JSON text without interpreting them, so that a conformance vector's
// embedded objects can be verified from their own bytes (section 14): a writ embedded in a vector
// file keeps its number spellings, its duplicate members and its depth exactly as written, which a
// parse of the whole file would lose. Lenient by design: it only finds boundaries; the strict
// reader (kernel/json.ts) judges the bytes afterwards.

/** A value's text span, and for containers its members (objects) or elements (arrays). */
export interface Span {
  readonly start: number
  readonly end: number
  readonly kind: "object" | "array" | "scalar"
  readonly members?: ReadonlyArray<{ readonly name: string; readonly span: Span }>
  readonly elements?: ReadonlyArray<Span>
}

/** Thrown only inside this module and caught by `scan`. */
class ScanError extends Error {}

const isWs = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r"

/** The span tree of one JSON text, or undefined if its boundaries cannot be found. Nesting is
 * walked iteratively for containers beyond `maxDepth` by treating them as opaque. */
export const scan = (text: string, maxDepth = 200): Span | undefined => {
  let i = 0
  const ws = () => {
    while (i < text.length && isWs(text[i])) i++
  }
  const str = (): string => {
    const s = i
    i++
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1
    if (i >= text.length) throw new ScanError("unterminated string")
    i++
    try {
      return JSON.parse(text.slice(s, i)) as string
    } catch {
      return text.slice(s + 1, i - 1)
    }
  }
  const skipOpaque = () => {
    // Skip a container without recording structure (used past maxDepth).
    let depth = 0
    do {
      const c = text[i]
      if (c === '"') {
        str()
        continue
      }
      if (c === "{" || c === "[") depth++
      else if (c === "}" || c === "]") depth--
      i++
      if (i > text.length) throw new ScanError("unterminated container")
    } while (depth > 0)
  }
  const value = (depth: number): Span => {
    ws()
    const start = i
    const c = text[i]
    if (c === "{") {
      if (depth >= maxDepth) {
        skipOpaque()
        return { start, end: i, kind: "object" }
      }
      i++
      const members: Array<{ name: string; span: Span }> = []
      ws()
      if (text[i] === "}") {
        i++
        return { start, end: i, kind: "object", members }
      }
      for (;;) {
        ws()
        if (text[i] !== '"') throw new ScanError("expected a member name")
        const name = str()
        ws()
        if (text[i] !== ":") throw new ScanError("expected :")
        i++
        members.push({ name, span: value(depth + 1) })
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return { start, end: i, kind: "object", members }
        }
        throw new ScanError("expected , or }")
      }
    }
    if (c === "[") {
      if (depth >= maxDepth) {
        skipOpaque()
        return { start, end: i, kind: "array" }
      }
      i++
      const elements: Array<Span> = []
      ws()
      if (text[i] === "]") {
        i++
        return { start, end: i, kind: "array", elements }
      }
      for (;;) {
        elements.push(value(depth + 1))
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return { start, end: i, kind: "array", elements }
        }
        throw new ScanError("expected , or ]")
      }
    }
    if (c === '"') {
      str()
      return { start, end: i, kind: "scalar" }
    }
    while (i < text.length && !isWs(text[i]) && text[i] !== "," && text[i] !== "}" && text[i] !== "]") i++
    if (i === start) throw new ScanError("expected a value")
    return { start, end: i, kind: "scalar" }
  }
  try {
    return value(0)
  } catch (e) {
    if (e instanceof ScanError) return undefined
    throw e
  }
}

/** The member `name` of an object span (the first, if repeated). */
export const member = (s: Span | undefined, name: string): Span | undefined => s?.members?.find((m) => m.name === name)?.span

/** The text of a span with insignificant whitespace removed, every other character kept. */
export const minified = (text: string, s: Span): string => {
  let out = ""
  let i = s.start
  while (i < s.end) {
    const c = text[i]
    if (c === '"') {
      const b = i
      i++
      while (i < s.end && text[i] !== '"') i += text[i] === "\\" ? 2 : 1
      i++
      out += text.slice(b, i)
      continue
    }
    if (!isWs(c)) out += c
    i++
  }
  return out
}
