// The package as a newcomer runs it: packed, installed offline into an empty project (pack.ts),
// and from that install, with no TypeScript loader and no dev dependency anywhere, `mandate demo
// --ledger` (then `mandate ledger verify` on what it wrote), `mandate console`
// (started on a free port: the page, its script and an API route fetched, then stopped), `mandate
// writ serve --handler` with the shipped JavaScript example handler (called once with `mandate writ
// send`), and the ledger's plain-JavaScript example (guarded actions under a budget on SQLite).
// Slow (a pack, an install, a dozen processes): run on its own with
//   npx vitest run --config test/vitest.config.ts test/package/e2e.test.ts
import { type ChildProcess, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { repoRoot } from "../support/shared.js"
import { ensureBuilt, type Installed, packAndInstall, run } from "./pack.js"

vi.setConfig({ testTimeout: 300_000, hookTimeout: 900_000 })

let installed: Installed
const started: Array<ChildProcess> = []

/**
 * The install runs no install scripts (pack.ts: offline, better-sqlite3's would fetch or compile
 * its native addon). What those scripts leave behind, the compiled addon for this Node on this
 * machine, is taken from this repository's own install of the same locked version, so that the
 * commands that open SQLite stores can run from the consumer project.
 */
const provideNativeSqlite = (dir: string): void => {
  const addon = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node")
  const from = join(repoRoot, addon)
  const version = (d: string) => (JSON.parse(readFileSync(join(d, "node_modules", "better-sqlite3", "package.json"), "utf8")) as { version: string }).version
  if (version(repoRoot) !== version(dir)) throw new Error("better-sqlite3 in the consumer is not the version this repository locks")
  mkdirSync(join(dir, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true })
  copyFileSync(from, join(dir, addon))
}

beforeAll(async () => {
  await ensureBuilt()
  installed = await packAndInstall()
  if (!installed.ok) console.log(installed.notice)
  else provideNativeSqlite(installed.dir)
})
afterAll(() => {
  // Only the processes this file started, by their own handle.
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  if (installed !== undefined) rmSync(installed.dir, { recursive: true, force: true })
})

/** The consumer project, or skip the test with the notice printed in beforeAll. */
const consumer = (skip: () => void): string => {
  if (!installed.ok) skip()
  return installed.dir
}

/** The installed bin, as npm linked it into the consumer's node_modules/.bin. */
const mandate = (dir: string, args: ReadonlyArray<string>, timeoutMs?: number) =>
  run(join(dir, "node_modules", ".bin", "mandate"), args, dir, timeoutMs)

/** Starts the installed bin and resolves with the first stdout line matching `ready`. */
const startMandate = (dir: string, args: ReadonlyArray<string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> =>
  new Promise((resolve, reject) => {
    const child = spawn(join(dir, "node_modules", ".bin", "mandate"), args, {
      cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"]
    })
    started.push(child)
    let out = ""
    let err = ""
    child.stderr!.on("data", (d: Buffer) => { err += d.toString() })
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const m = ready.exec(out)
      if (m !== null) resolve({ child, match: m })
    })
    child.on("exit", (code) => reject(new Error(`mandate ${args.join(" ")} exited (${code}) before it was ready:\n${out}\n${err}`)))
  })

/** SIGTERM, resolved once the process has exited. */
const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const didOf = (text: string): string => {
  const m = /did:key:z[1-9A-HJ-NP-Za-km-z]+/.exec(text)
  expect(m, text).not.toBeNull()
  return m![0]
}

describe("from the installed package, with no loader and no dev dependency", () => {
  it("ships the example handlers and the console page as JavaScript, and the docs", (ctx) => {
    const pkg = join(consumer(() => ctx.skip()), "node_modules", "mandate")
    for (const f of ["dist/examples/payment.js", "dist/examples/booking.js", "dist/examples/orders-api.js", "dist/examples/refund-jobs.js", "dist/examples/ledger-budget.mjs", "dist/console/web/app.js", "docs/index.md"]) {
      expect(existsSync(join(pkg, f)), f).toBe(true)
    }
    // What would make any of this pass by accident: a loader or the bundler installed.
    expect(existsSync(join(pkg, "..", "tsx"))).toBe(false)
    expect(existsSync(join(pkg, "..", "esbuild"))).toBe(false)
  })

  it("`mandate demo --ledger` runs A, B and C, every expectation holds, and its ledger of B's and C's decisions verifies", async (ctx) => {
    // One run of the demo from the install (each takes a dozen processes): the plain demo's checks
    // and the ledger's together.
    const dir = consumer(() => ctx.skip())
    const r = await mandate(dir, ["demo", "--out", join(dir, "out"), "--ledger", "ledger.db"])
    expect(r.status, r.stdout.slice(-2000) + r.stderr).toBe(0)
    expect(r.stdout).toContain("demo: every expectation held")
    expect(r.stdout).toMatch(/\d+ expectations checked, 0 failed/)
    expect(existsSync(join(dir, "out", "c.sqlite"))).toBe(true)
    const v = await mandate(dir, ["ledger", "verify", "ledger.db"])
    expect(v.status, v.stderr).toBe(0)
    expect(v.stdout).toMatch(/^ok: ledger default \(local_full\), \d+ lines, chain intact/)
  })

  it("`mandate console` serves the built page and its API on a free port, then stops", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    // The demo's store and ledger when the tests above ran; the console starts without them too.
    const sources = existsSync(join(dir, "ledger.db")) ? ["--ledger", "ledger.db", "--store", join("out", "c.sqlite")] : []
    const { child, match } = await startMandate(dir, ["console", "--port", "0", ...sources], /console on (http:\/\/127\.0\.0\.1:\d+\/)/)
    const url = match[1]
    try {
      const page = await fetch(url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain(`<script type="module" src="/assets/app.js">`)
      const script = await fetch(new URL("/assets/app.js", url))
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toMatch(/^text\/javascript/)
      // The page as `npm run build` bundled it, served as it is.
      expect(await script.text()).toBe(readFileSync(join(dir, "node_modules", "mandate", "dist", "console", "web", "app.js"), "utf8"))
      const info = await fetch(new URL("/api/info", url))
      expect(info.status).toBe(200)
      expect(info.headers.get("content-type")).toMatch(/^application\/json/)
      expect(typeof await info.json()).toBe("object")
      const missing = await fetch(new URL("/api/nothing", url))
      expect(await missing.json()).toMatchObject({ error: "console/not_found" })
    } finally {
      await stop(child)
    }
  })

  it("`mandate writ serve --handler` runs the shipped JavaScript payment handler, and a call to it verifies", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    const handler = join("node_modules", "mandate", "dist", "examples", "payment.js")
    const [ka, kc] = await Promise.all([mandate(dir, ["keygen", "a.key"]), mandate(dir, ["keygen", "c.key"])])
    expect(ka.status, ka.stderr).toBe(0)
    expect(kc.status, kc.stderr).toBe(0)
    const A = didOf(ka.stdout)
    const C = didOf(kc.stdout)
    const issued = await mandate(dir, ["writ", "issue", "--key", "a.key", "--hld", C, "--act", "travel", "--max", "amount=60000", "--ttl", "3600", "--out", "grant.json"])
    expect(issued.status, issued.stderr).toBe(0)
    const called = await mandate(dir, ["writ", "call", "--key", "a.key", "--chain", "grant.json", "--op", "travel/charge", "--args", `{"amount":58900,"currency":"USD"}`, "--out", "call.json"])
    expect(called.status, called.stderr).toBe(0)
    const { child, match } = await startMandate(dir, ["writ", "serve", "--port", "0", "--store", "c.sqlite", "--key", "c.key", "--root", A, "--handler", handler], /"url":"(http:\/\/[^"]+)"/)
    try {
      const sent = await mandate(dir, ["writ", "send", match[1], "call.json", "--out", "answer.json"])
      expect(sent.status, sent.stdout + sent.stderr).toBe(0)
      expect(sent.stdout).toMatch(/^status 200\ntally ok\n/)
      expect(sent.stdout).toContain("verdict: valid")
      // What the handler answered: the fake charge of src/examples/payment.ts.
      const answer = JSON.parse(readFileSync(join(dir, "answer.json"), "utf8")) as { res: { amount: number; currency: string } }
      expect(answer.res).toMatchObject({ amount: 58900, currency: "USD" })
    } finally {
      await stop(child)
    }
  })

  it("the ledger's plain-JavaScript example guards actions under a USD budget on SQLite", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    copyFileSync(join(dir, "node_modules", "mandate", "dist", "examples", "ledger-budget.mjs"), join(dir, "ledger-budget.mjs"))
    const r = await run(process.execPath, ["ledger-budget.mjs", "example.db"], dir)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout.split("\n").slice(0, 4)).toEqual([
      "document 1 ran: summary of document 1",
      "document 2 ran: summary of document 2",
      "document 3 ran: summary of document 3",
      "document 4 refused: usd_budget_exhausted"
    ])
    expect(r.stdout).toMatch(/\nledger: \d+ lines, chain intact\n$/)
    // The ledger it wrote is the CLI's too.
    const v = await mandate(dir, ["ledger", "verify", "example.db"])
    expect(v.status, v.stderr).toBe(0)
  })
})
