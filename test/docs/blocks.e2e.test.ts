// Every shell example of the README and of docs/*.md runs as written, page by page, in order, as a
// reader would paste them: one temporary folder per page (also its HOME, so nothing reads or writes
// the real ~), shell variables, functions and the working folder carried from one block of a page to the next,
// `mandate` on the PATH as the installed bin (a link to scripts/mandate.mjs over the built dist/,
// the layout `npm install` makes), each block run under `set -e` and its exit status checked. Where
// the page shows a block's output in a ```text block right after it, every line shown must appear in
// what it printed, in order (`…` stands for what differs between runs). Servers a block starts with
// `&` are stopped when the page ends. The few blocks a test cannot run carry a
// `<!-- docs-test: skip REASON -->` marker and are printed with their reason. A page added to
// docs/ is picked up without a change here.
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt } from "../package/pack.js"
import { repoRoot } from "../support/shared.js"
import { missingLines, shellBlocks } from "./blocks.js"

const BLOCK_TIMEOUT_MS = 240_000

// MANDATE_DOCS_PAGE=docs/writ.md (a page, or part of its name) runs only the pages it names.
const only = process.env.MANDATE_DOCS_PAGE
const pages = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)
].filter((p) => only === undefined || p.includes(only))

const work = mkdtempSync(join(tmpdir(), "mandate-docs-"))
const bin = join(work, "bin")
afterAll(() => rmSync(work, { recursive: true, force: true }))

beforeAll(async () => {
  await ensureBuilt()
  mkdirSync(bin)
  // As npm links a package's bin: a symbolic link to the package's own scripts/mandate.mjs.
  symlinkSync(join(repoRoot, "scripts", "mandate.mjs"), join(bin, "mandate"))
}, 900_000)

/** The environment a reader's shell would have: no Mandate or YEA settings of this machine. */
const environment = (home: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(MANDATE_|YEA_|VITEST|npm_)/.test(k)) env[k] = v
  }
  return { ...env, HOME: home, NO_COLOR: "1", PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}` }
}

interface BlockRun { readonly status: number | null; readonly output: string; readonly background: boolean }

/** Runs one block in its own process group: the previous blocks' variables and folder restored
 * first, its own saved after, and whether it left anything running in the background. */
const runBlock = (dir: string, n: number, code: string, env: NodeJS.ProcessEnv, groups: Array<number>): Promise<BlockRun> => {
  const state = join(dir, ".docs-test")
  const script = join(state, `block-${n}.sh`)
  const outFile = join(state, `block-${n}.out`)
  writeFileSync(script, [
    "set -a",
    `[ -f '${state}/vars' ] && . '${state}/vars'`,
    `[ -f '${state}/funcs' ] && . '${state}/funcs'`,
    `cd "$(cat '${state}/cwd')"`,
    `trap 'export -p > "${state}/vars"; declare -f > "${state}/funcs"; pwd > "${state}/cwd"; jobs -p > "${state}/jobs"' EXIT`,
    "set -e",
    code,
    ""
  ].join("\n"))
  const fd = openSync(outFile, "w")
  return new Promise((resolve) => {
    const child = spawn("bash", [script], { cwd: dir, env, detached: true, stdio: ["ignore", fd, fd] })
    closeSync(fd)
    const timer = setTimeout(() => { try { process.kill(-child.pid!, "SIGKILL") } catch { /* gone */ } }, BLOCK_TIMEOUT_MS)
    child.on("close", (status) => {
      clearTimeout(timer)
      const jobs = existsSync(join(state, "jobs")) ? readFileSync(join(state, "jobs"), "utf8").trim() : ""
      if (jobs !== "") groups.push(child.pid!)
      resolve({ status, output: readFileSync(outFile, "utf8"), background: jobs !== "" })
    })
  })
}

const alive = (group: number): boolean => {
  try {
    process.kill(-group, 0)
    return true
  } catch {
    return false
  }
}

/** Stops what a page left running: SIGTERM to each block's process group, SIGKILL to what is
 * still there after a few seconds. */
const stopAll = async (groups: ReadonlyArray<number>): Promise<void> => {
  for (const g of groups) {
    try { process.kill(-g, "SIGTERM") } catch { /* gone */ }
  }
  for (let i = 0; i < 50 && groups.some(alive); i++) await new Promise((r) => setTimeout(r, 100))
  for (const g of groups.filter(alive)) {
    try { process.kill(-g, "SIGKILL") } catch { /* gone */ }
  }
}

describe("the shell examples of the README and docs/", () => {
  for (const page of pages) {
    it(`${page}: every shell block runs as written`, async () => {
      const blocks = shellBlocks(readFileSync(join(repoRoot, page), "utf8"))
      const dir = join(work, page.replace(/[/.]/g, "_"))
      mkdirSync(join(dir, ".docs-test"), { recursive: true })
      writeFileSync(join(dir, ".docs-test", "cwd"), dir)
      const env = environment(dir)
      const groups: Array<number> = []
      try {
        for (const [n, block] of blocks.entries()) {
          const where = `${page}:${block.line}`
          if (block.skip !== undefined) {
            console.log(`[docs] not run: ${where}: ${block.skip}\n${block.code.replace(/^/gm, "    ")}`)
            continue
          }
          const r = await runBlock(dir, n, block.code, env, groups)
          expect(r.status, `${where} exited ${r.status}:\n${block.code}\n--- it printed:\n${r.output.slice(-4000)}`).toBe(0)
          const missing = missingLines(block.expected, r.output)
          expect(missing, `${where}: the output shown after the block is not what it printed:\n${r.output.slice(-4000)}`).toEqual([])
        }
      } finally {
        await stopAll(groups)
      }
    }, 1_800_000)
  }
})
