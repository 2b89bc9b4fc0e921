// The layering of DESIGN.md, checked: imports flow kernel <- accounting <- protocols (writ, yea,
// ledger) <- store, bind <- app <- cli; a protocol never imports another protocol, a store or a
// transport; the console (a read-only page) sits above app and below cli; a store and a
// transport never import each other (only a composition root in app/, or
// the CLI, picks a store for a transport);
// no module imports itself back through a cycle; nothing outside kernel touches the wall clock or
// Math.random (design card: clocks and randomness come from Layers).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/shared.js"

const src = join(repoRoot, "src")

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : []
  })

const all = files(src)
const importsOf = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const out: Array<string> = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"\n;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
    const spec = m[1] ?? m[2]
    if (spec.startsWith(".")) out.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")))
  }
  return out
}

/** The layer of a file: its first folder under src/ (writ/executor counts as writ). */
const layer = (file: string): string => relative(src, file).split("/")[0].replace(/\.ts$/, "")

const allowed: Record<string, ReadonlyArray<string>> = {
  kernel: ["kernel"],
  accounting: ["kernel", "accounting"],
  writ: ["kernel", "accounting", "writ"],
  yea: ["kernel", "accounting", "yea"],
  ledger: ["kernel", "accounting", "ledger"],
  // The LLM spend gateway: its provider wire modules and server over the accounting core; the
  // store-backed parts (keys, the SQLite/PostgreSQL choice) are composed in app/.
  gateway: ["kernel", "accounting", "writ", "yea", "ledger", "gateway"],
  store: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store"],
  bind: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "bind"],
  app: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store", "bind", "app"],
  console: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store", "bind", "app", "console"],
  cli: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store", "bind", "app", "console", "examples", "cli"],
  // The examples (built to JavaScript with the rest) sit above app/ and the console: they use the
  // library as a user's module would, and app/ where a demo composes them (yea-demo.ts). Only the
  // CLI's demo commands import them; app/ and the package root never do (they are the subpath
  // `mandate/examples`). The handler modules (payment, booking) are loaded by path and imported by
  // nothing. No file cycle may run through them (checked below).
  examples: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store", "bind", "app", "console", "examples"],
  index: ["kernel", "accounting", "writ", "yea", "ledger", "gateway", "store", "bind", "app", "console"]
}

describe("module layering (DESIGN.md)", () => {
  it("imports flow one way", () => {
    const bad: Array<string> = []
    for (const f of all) {
      const from = layer(f)
      for (const target of importsOf(f)) {
        const to = layer(target)
        if (!(allowed[from] ?? []).includes(to)) bad.push(`${relative(src, f)} -> ${relative(src, target)}`)
      }
    }
    expect(bad).toEqual([])
  })

  it("has no circular imports", () => {
    const graph = new Map(all.map((f) => [f, importsOf(f).filter((t) => all.includes(t))]))
    const state = new Map<string, "open" | "done">()
    const cycles: Array<string> = []
    const visit = (f: string, path: Array<string>): void => {
      if (state.get(f) === "done") return
      if (state.get(f) === "open") {
        cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(src, p)).join(" -> "))
        return
      }
      state.set(f, "open")
      for (const t of graph.get(f) ?? []) visit(t, [...path, f])
      state.set(f, "done")
    }
    for (const f of all) visit(f, [])
    expect(cycles).toEqual([])
  })

  it("reads no wall clock or Math.random outside the kernel's services", () => {
    const bad = all
      .filter((f) => layer(f) !== "kernel")
      .flatMap((f) => readFileSync(f, "utf8").split("\n").map((l, i) => [f, i, l] as const))
      .filter(([, , l]) => /Date\.now\(|new Date\(\)|Math\.random\(/.test(l) && !/^\s*(\/\/|\*)/.test(l))
      .map(([f, i]) => `${relative(src, f)}:${i + 1}`)
    expect(bad).toEqual([])
  })
})
