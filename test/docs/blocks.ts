// Reads the shell examples out of a Markdown page, for the test that runs them
// (blocks.e2e.test.ts): every ```sh block in order, whether a `<!-- docs-test: skip REASON -->`
// comment stands right before it (the few blocks a test cannot run, such as `npm ci` in a clone),
// and the ```text block that follows it, if any, whose lines are checked against what it printed.

export interface ShellBlock {
  /** 1-based line of the opening fence, for messages. */
  readonly line: number
  readonly code: string
  /** Why a test does not run it, when a skip marker stands before it. */
  readonly skip: string | undefined
  /** The output the page shows for it: the lines of the ```text block right after it. */
  readonly expected: ReadonlyArray<string>
}

const SKIP = /^<!--\s*docs-test:\s*skip\s+(.*?)\s*-->$/

interface Fence { readonly lang: string; readonly line: number; readonly body: Array<string>; readonly before: string; readonly gap: string }

/** Every fenced block of a page with its language, its text, and the text between it and the fence
 * before it (where a skip marker or the prose separating output from a command would be). */
const fences = (markdown: string): Array<Fence> => {
  const lines = markdown.split("\n")
  const found: Array<Fence> = []
  let between: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i])
    if (open === null) {
      between.push(lines[i])
      continue
    }
    const body: Array<string> = []
    let j = i + 1
    while (j < lines.length && !/^```\s*$/.test(lines[j])) body.push(lines[j++])
    if (j >= lines.length) throw new Error(`line ${i + 1}: a \`\`\`${open[1]} block is never closed`)
    const gap = between.join("\n")
    const before = between.map((l) => l.trim()).filter((l) => l !== "").at(-1) ?? ""
    found.push({ lang: open[1], line: i + 1, body, before, gap })
    between = []
    i = j
  }
  return found
}

export const shellBlocks = (markdown: string): Array<ShellBlock> => {
  const all = fences(markdown)
  const blocks: Array<ShellBlock> = []
  all.forEach((f, k) => {
    if (f.lang !== "sh") return
    const next = all[k + 1]
    const expected = next !== undefined && next.lang === "text" && next.gap.trim() === "" ? next.body.filter((l) => l.trim() !== "") : []
    blocks.push({ line: f.line, code: f.body.join("\n"), skip: SKIP.exec(f.before)?.[1], expected })
  })
  return blocks
}

/** A line of shown output as a pattern: `…` stands for any text (ids, times, keys that differ on
 * every run); everything else is literal, surrounding blanks ignored. */
const pattern = (shown: string): RegExp =>
  new RegExp(shown.trim().split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*"))

/** The shown lines that the actual output does not contain, in order: each must match a line of
 * the output after the one the previous shown line matched. */
export const missingLines = (expected: ReadonlyArray<string>, actual: string): Array<string> => {
  const out = actual.split("\n")
  const missing: Array<string> = []
  let at = 0
  for (const shown of expected) {
    const p = pattern(shown)
    const k = out.findIndex((l, i) => i >= at && p.test(l))
    if (k < 0) missing.push(shown)
    else at = k + 1
  }
  return missing
}
