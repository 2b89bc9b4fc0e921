// The docs hang together: docs/index.md links every page in docs/, and every relative link of the
// README and of docs/*.md names a file that exists (its #anchor, if any, a heading of that page).
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { repoRoot } from "../support/shared.js"

// Pages that other work adds (the console, the generated command-line reference, the layout, A2A,
// `writ mcp-gate`, the YEA tools): linked already, excused only while they are absent.
const PENDING = new Set<string>([])

const pages = ["README.md", ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
const read = (page: string) => readFileSync(join(repoRoot, page), "utf8")

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")

const anchors = (page: string): Set<string> =>
  new Set(read(page).split("\n").filter((l) => /^#{1,6} /.test(l)).map((l) => anchor(l.replace(/^#+ /, ""))))

/** Relative Markdown links of a page outside code blocks: [target, #anchor or ""]. */
const links = (page: string): Array<[string, string]> => {
  const prose = read(page).replace(/```[\s\S]*?```/g, "")
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((t) => !/^[a-z]+:/.test(t))
    .map((t) => {
      const [file, hash] = t.split("#")
      const target = file === "" ? page : relative(repoRoot, normalize(join(repoRoot, dirname(page), file)))
      return [target, hash ?? ""]
    })
}

describe("docs links", () => {
  it("docs/index.md links every page of docs/", () => {
    const linked = new Set(links("docs/index.md").map(([t]) => t))
    expect(pages.filter((p) => p.startsWith("docs/") && p !== "docs/index.md" && !linked.has(p))).toEqual([])
  })

  it("every relative link names a file that exists, and an anchor a heading of it", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      for (const [target, hash] of links(page)) {
        if (!existsSync(join(repoRoot, target))) {
          if (!PENDING.has(target)) broken.push(`${page}: ${target}`)
          continue
        }
        if (hash !== "" && target.endsWith(".md") && !anchors(target).has(hash)) broken.push(`${page}: ${target}#${hash}`)
      }
    }
    expect(broken).toEqual([])
  })

  it("finds a broken link and a missing anchor (the check can fail)", () => {
    expect(anchor("The demo: `npm start` / `mandate demo`")).toBe("the-demo-npm-start--mandate-demo")
    expect(existsSync(join(repoRoot, "docs/no-such-page.md"))).toBe(false)
    expect(anchors("docs/writ.md").has("no-such-heading")).toBe(false)
  })
})
