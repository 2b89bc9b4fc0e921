// `mandate console` in real Chromium: the console is started on the
// demo's B store and a ledger, and the page is driven as a person would: the demo's tally tree
// shows its two hops and their section 6.2 verdicts; the forged receipt shows its failing hop and
// reason; the audit filter by reason `count_exhausted` shows exactly the demo's refusals of that
// reason at B; the budget view matches the ledger's own `stats`, `verify` and `replay`; the spend
// view equals the USD the ledger holds (the YEA demo's draws included) with principals named from
// the demo's key files; the ledger's lines come a page at a time; each view is within two window
// heights. Each view is saved as a screenshot: to a temporary folder, so a test run never rewrites
// a tracked file, or to the folder named by MANDATE_SCREENSHOTS (`npm run screenshots` renews the
// images of docs/console.md).
import { it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { NodeContext } from "@effect/platform-node"
import type { ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { identity } from "../../src/writ/sign.js"
import { runMandate, spawnMandate } from "../support/cli.js"
import { sharedDemo } from "../support/demo-run.js"
import { repoRoot } from "../support/shared.js"
import { chromiumPresent, launch } from "./browser.js"
import { buildLedger, POLICY, usedOf } from "./fixture.js"
import { fromNanos, toNanos } from "../../src/ledger/usd.js"

const present = chromiumPresent()
const work = mkdtempSync(join(tmpdir(), "mandate-console-"))
const shots = process.env.MANDATE_SCREENSHOTS !== undefined ? join(repoRoot, process.env.MANDATE_SCREENSHOTS) : join(work, "screenshots")
/** The demo's output folder: the run this test run shares (test/support/demo-run.ts), read only. */
let out = ""
const ledgerFile = join(work, "ledger.db")
const policyFile = join(work, "policy.json")
let console_: ChildProcess | undefined
let url = ""
let browser: { context: BrowserContext; close: () => Promise<void> } | undefined
let page: Page
/** Every URL the browser asked for, to show the page needs nothing beyond the console. */
const requested: Array<string> = []

/** Starts `mandate console` and waits (bounded) for the line with its URL. */
const startConsole = (args: ReadonlyArray<string>): Promise<{ child: ChildProcess; url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnMandate(["console", ...args, "--port", "0"])
    let seen = ""
    let err = ""
    const timer = setTimeout(() => { child.kill("SIGKILL"); reject(new Error(`console did not start: ${seen} ${err}`)) }, 120_000)
    child.stderr!.on("data", (d: Buffer) => { err += d.toString() })
    child.stdout!.on("data", (d: Buffer) => {
      seen += d.toString()
      const m = /console on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(seen)
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }) }
    })
    child.on("close", (code) => { clearTimeout(timer); reject(new Error(`console exited ${code}: ${err}`)) })
  })

const json = (file: string) => JSON.parse(readFileSync(join(out, file), "utf8")) as Record<string, unknown>
const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
const step = <A>(f: () => Promise<A>) => Effect.promise(f)
/** How many window heights the page is tall (each view is kept within two). */
const screens = () => page.evaluate(() => document.documentElement.scrollHeight / window.innerHeight)

describe.skipIf(!present)("mandate console in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true })
    const demo = await sharedDemo()
    out = demo.out
    if (demo.status !== 0) throw new Error(`the demo failed: ${demo.stdout.slice(-2000)} ${demo.stderr.slice(-1000)}`)
    await Effect.runPromise(buildLedger(ledgerFile, out).pipe(Effect.provide(NodeContext.layer)))
    // The YEA demo's services record their decisions in the same ledger: its shop orders draw USD.
    const yea = await runMandate(["yea", "demo", "--ledger", ledgerFile], 240_000, "SIGINT")
    if (yea.status !== 0) throw new Error(`the YEA demo failed: ${yea.stdout.slice(-2000)} ${yea.stderr.slice(-1000)}`)
    writeFileSync(policyFile, JSON.stringify({ ...POLICY, policies: [{ type: "token_budget", tokens: 3000 }] }))
    const started = await startConsole(["--store", join(out, "b.sqlite"), "--ledger", ledgerFile, "--policy", policyFile, "--keys", join(out, "keys")])
    console_ = started.child
    url = started.url
    browser = await launch()
    browser.context.on("request", (r) => { requested.push(r.url()) })
    page = await browser.context.newPage()
    page.setDefaultTimeout(60_000)
  }, 600_000)

  afterAll(async () => {
    await browser?.close()
    console_?.kill("SIGINT")
    rmSync(work, { recursive: true, force: true })
  }, 120_000)

  const openTree = async (tally: string, call: string) => {
    await page.goto(`${url}#tally`)
    await page.setInputFiles("#tally-file", join(out, tally))
    await page.setInputFiles("#call-file", join(out, call))
    await page.click("#open-tally")
    await page.waitForSelector(`#tree-out .tree[data-source="${tally}"]`)
  }

  it.live("the demo's tally tree shows its two hops and their section 6.2 verdicts", () =>
    Effect.gen(function*() {
      yield* step(() => openTree("04-call-A-B-book-answer.json", "03-call-A-B-book.json"))
      expect(yield* step(() => page.getAttribute("#tree-out .tree", "data-verdict"))).toBe("valid")
      const hops = yield* step(() => page.$$eval("#tree-out section.hop", (els) => els.map((e) => ({
        path: e.getAttribute("data-path"), verdict: e.getAttribute("data-verdict"), op: e.querySelector(".hop-op")?.textContent ?? ""
      }))))
      expect(hops).toEqual([
        { path: "", verdict: "valid", op: "top travel/book" },
        { path: "sub[0]", verdict: "valid", op: "hop 1 travel/charge" }
      ])
      // Narrowing side by side: C's hop ran under writ_1 then writ_2, which took `amount` down.
      const narrowed = yield* step(() => page.$$eval("section.hop[data-path='sub[0]'] table.narrowing td.narrowed", (els) => els.length))
      expect(narrowed).toBeGreaterThan(0)
      yield* step(() => shot("tally"))
    }), 300_000)

  it.live("a forged receipt shows its failing hop and reason", () =>
    Effect.gen(function*() {
      yield* step(() => openTree("22-forged-tally-B.json", "03-call-A-B-book.json"))
      expect(yield* step(() => page.getAttribute("#tree-out .tree", "data-verdict"))).toBe("signed_unauthorized")
      const failing = yield* step(() => page.$$eval("#tree-out section.hop.failing", (els) => els.map((e) => ({
        path: e.getAttribute("data-path"), text: e.querySelector(".fails")?.textContent ?? ""
      }))))
      expect(failing).toHaveLength(1)
      expect(failing[0].path).toBe("sub[0]")
      expect(failing[0].text).toContain("bad_signature")
      yield* step(() => shot("tally-forged"))
    }), 300_000)

  it.live("the audit filter by reason count_exhausted shows exactly the demo's refusals", () =>
    Effect.gen(function*() {
      yield* step(() => page.goto(`${url}#audit`))
      yield* step(() => page.waitForSelector("#audit-rows tr"))
      yield* step(() => page.waitForFunction(() => document.querySelector("#audit-count")?.textContent?.includes("matching")))
      yield* step(() => shot("audit-all"))
      yield* step(() => page.fill("#f-reason", "count_exhausted"))
      yield* step(() => page.click("#apply-filters"))
      yield* step(() => page.waitForFunction(() => document.querySelector("#audit-count")?.textContent?.includes("matching")))
      const rows = yield* step(() => page.$$eval("#audit-rows tr", (els) => els.map((e) => e.getAttribute("data-reason"))))
      // What B's own audit file says, and the call the demo sent twice.
      const expected = readFileSync(join(out, "audit-B.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as { reason: string | null; identity: string | null }).filter((e) => e.reason === "count_exhausted")
      expect(rows).toEqual(expected.map(() => "count_exhausted"))
      expect(expected.map((e) => e.identity)).toEqual([identity(json("19-refuse-book-twice.json") as never)])
      const shown = yield* step(() => page.$$eval("#audit-rows tr td:nth-child(1)", (els) => els.length))
      expect(shown).toBe(expected.length)
      yield* step(() => shot("audit"))
    }), 300_000)

  it.live("the budget view matches the ledger's own stats, verify and replay", () =>
    Effect.gen(function*() {
      yield* step(() => page.goto(`${url}#ledger`))
      yield* step(() => page.waitForSelector("#stats-table tbody tr"))
      const stats = yield* step(() => runMandate(["ledger", "stats", ledgerFile, "--json"], 120_000, "SIGKILL"))
      expect(stats.status).toBe(0)
      const own = JSON.parse(stats.stdout) as { rows: Array<{ protocol: string; principal: string; reason: string; count: number; tokens: number; usd: string }>; summary: string }
      // A principal is shown by name or short; its whole id is the cell's data-id.
      const table = yield* step(() => page.$$eval("#stats-table tbody tr", (els) => els.map((e) => [...e.querySelectorAll("td")].map((td) => td.querySelector("[data-id]")?.getAttribute("data-id") ?? td.textContent))))
      expect(table).toEqual(own.rows.map((r) => [r.protocol, r.principal, r.reason, String(r.count), String(r.tokens), r.usd]))
      expect(yield* step(() => page.textContent("#stats-summary"))).toBe(own.summary)
      const verify = yield* step(() => runMandate(["ledger", "verify", ledgerFile], 120_000, "SIGKILL"))
      const lines = /(\d+) lines, chain intact, head (\S+)/.exec(verify.stdout)
      expect(lines).not.toBeNull()
      const verdict = yield* step(() => page.textContent("#chain-verdict"))
      expect(verdict).toContain(`hash chain intact: ${lines![1]} lines`)
      const replayed = yield* step(() => runMandate(["ledger", "replay", ledgerFile, "--policy", policyFile], 120_000, "SIGKILL"))
      const denied = /would deny (\d+) that ran: (\d+) tokens and \$(\S+) saved/.exec(replayed.stdout)
      expect(denied).not.toBeNull()
      const replayRow = yield* step(() => page.$$eval("#replay-table tbody tr:first-child td", (els) => els.map((e) => e.textContent)))
      expect(replayRow).toEqual(["would deny (ran)", denied![1], denied![2], denied![3]])
      // The remaining budgets: limit minus the store's usage, for both budgets the guard drew on.
      const limits = yield* step(() => page.$$eval("#limits-table tbody tr", (els) => els.map((e) => [...e.querySelectorAll("td")].slice(0, 5).map((td) => td.textContent ?? ""))))
      expect(limits.map((l) => [l[0], l[1]])).toEqual([["ledger/demo/tokens/tokens", "tokens"], ["ledger/demo/usd/usd", "USD"]])
      // The fixture's budgets (5000 tokens, $2.50) and what the store says is used of them.
      expect(limits.map((l) => l[2])).toEqual(["5000", "2.5"])
      const used = yield* usedOf(ledgerFile, ["ledger/demo/tokens/tokens", "ledger/demo/usd/usd"])
      expect(limits.map((l) => l[3])).toEqual([used[0].toString(), fromNanos(used[1])])
      expect(limits.map((l) => l[4])).toEqual([(5000n - used[0]).toString(), fromNanos(2_500_000_000n - used[1])])
      // The executor's count store: writ_1 (one use) used once, nothing left; every key of B's usage table.
      yield* step(() => page.waitForSelector("#store-limits-rows tr"))
      const writLimits = yield* step(() => page.$$eval("#store-limits-rows tr", (els) => els.map((e) => [...e.querySelectorAll("td")].slice(0, 5).map((td) => td.getAttribute("data-id") ?? td.textContent ?? ""))))
      const db = new Database(join(out, "b.sqlite"), { readonly: true })
      const usage = db.prepare("SELECT key, used FROM accounting_usage ORDER BY key").all() as Array<{ key: string; used: string }>
      db.close()
      expect(writLimits.map((l) => [l[0], l[3]])).toEqual(usage.map((u) => [u.key, String(u.used)]))
      const w1 = json("02-writ_1.json") as { bnd: { uses: { v: number } } }
      expect(writLimits.find((l) => l[0] === `writ/count/${identity(w1 as never)}`)).toEqual([`writ/count/${identity(w1 as never)}`, "uses", String(w1.bnd.uses.v), "1", "0"])
      // Principals by name: A's did:key is shown as `a` (out/keys/a.key).
      const a = yield* step(() => page.$$eval("#stats-table .who.named", (els) => els.map((e) => e.textContent)))
      expect(a).toContain("a")
      expect(yield* step(screens)).toBeLessThanOrEqual(2)
      yield* step(() => shot("ledger"))
    }), 300_000)

  it.live("the spend view shows what the records hold, per unit, principals by name, human times, distinct axis labels", () =>
    Effect.gen(function*() {
      // What the ledger holds in USD: the guard's kept USD and the YEA demo's draws (spend:USD).
      const db = new Database(ledgerFile, { readonly: true })
      let usd = 0n
      let yeaUsd = 0n
      for (const { line } of db.prepare("SELECT line FROM ledger_lines ORDER BY seq").all() as Array<{ line: string }>) {
        const e = JSON.parse(line) as { type: string; kept_usd?: string; decision?: { protocol: string; kind: string; amounts?: Array<{ name: string; amount: string }> } }
        if (e.type === "settlement") usd += toNanos(e.kept_usd!)
        if (e.type === "protocol" && e.decision!.protocol === "yea" && e.decision!.kind === "uses_spent") {
          for (const a of e.decision!.amounts ?? []) if (a.name.endsWith(":USD")) yeaUsd += toNanos(a.amount)
        }
      }
      db.close()
      // The YEA demo's two shop orders (yea:// and the HTTP bridge legs).
      expect(fromNanos(yeaUsd)).toBe("96.78")
      yield* step(() => page.goto(`${url}#spend`))
      yield* step(() => page.waitForSelector("#spend-summary strong"))
      expect(yield* step(() => page.inputValue("#spend-unit"))).toBe("USD")
      const summary = yield* step(() => page.textContent("#spend-summary"))
      expect(summary).toContain(`${fromNanos(usd + yeaUsd)} USD spent in all`)
      expect(summary).toContain(`yea ${fromNanos(yeaUsd)}`)
      // The vertical axis: every label once; the horizontal one: times a person reads.
      const axis = () => page.$$eval("#spend-chart svg text.axis", (els) => els.map((e) => ({ anchor: e.getAttribute("text-anchor"), text: e.textContent ?? "" })))
      const labels = yield* step(axis)
      const y = labels.filter((l) => l.anchor === "end").map((l) => l.text)
      expect(y.length).toBeGreaterThan(2)
      expect(new Set(y).size).toBe(y.length)
      const x = labels.filter((l) => l.anchor === "middle").map((l) => l.text)
      expect(x.length).toBeGreaterThan(0)
      for (const t of x) expect(t).toMatch(/^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d:\d\d$/)
      yield* step(() => page.selectOption("#spend-by", "principal"))
      const legend = yield* step(() => page.$$eval("#spend-chart .legend li", (els) => els.map((e) => e.textContent ?? "")))
      expect(legend).toEqual(expect.arrayContaining(["agent-a", "agent-b"]))
      expect(legend.some((l) => l.startsWith("ed25519:") && l.endsWith("…"))).toBe(true)
      expect(yield* step(screens)).toBeLessThanOrEqual(2)
      yield* step(() => shot("spend"))
      // The executor's store: the booking's `amount` (58900, C's charge included), by A, named from a.key.
      yield* step(() => page.selectOption("#spend-source", "store"))
      yield* step(() => page.waitForFunction(() => (document.querySelector("#spend-unit") as HTMLSelectElement | null)?.value === "writ:amount"))
      const rows = yield* step(() => page.$$eval("#spend-table tbody tr", (els) => els.map((e) => [...e.querySelectorAll("td")].map((td) => td.textContent ?? ""))))
      const tally = json("04-call-A-B-book-answer.json") as { tally: { used: { amount: number } } }
      expect(rows).toEqual([["writ", "a", expect.stringMatching(/^amount of writ /), String(tally.tally.used.amount), "writ:amount", "1"]])
    }), 300_000)

  it.live("the ledger's lines come a page at a time", () =>
    Effect.gen(function*() {
      yield* step(() => page.goto(`${url}#lines`))
      yield* step(() => page.waitForSelector("#ledger-lines-rows tr"))
      expect(yield* step(() => page.$$eval("#ledger-lines-rows tr", (els) => els.length))).toBe(50)
      expect(yield* step(screens)).toBeLessThanOrEqual(2)
      yield* step(() => shot("lines"))
      const verify = yield* step(() => runMandate(["ledger", "verify", ledgerFile], 120_000, "SIGKILL"))
      const total = Number(/(\d+) lines, chain intact/.exec(verify.stdout)![1])
      let pages = 1
      while (yield* step(() => page.isVisible("#ledger-lines-more"))) {
        const before = yield* step(() => page.$$eval("#ledger-lines-rows tr", (els) => els.length))
        yield* step(() => page.click("#ledger-lines-more"))
        yield* step(() => page.waitForFunction((n) => document.querySelectorAll("#ledger-lines-rows tr").length > n, before))
        pages++
      }
      expect(yield* step(() => page.$$eval("#ledger-lines-rows tr", (els) => els.map((e) => Number(e.querySelector("td")?.textContent)))))
        .toEqual(Array.from({ length: total }, (_, i) => i))
      expect(pages).toBe(Math.ceil(total / 50))
    }), 300_000)

  it.live("is keyboard navigable, reads at 200% zoom without sideways scrolling, and loads nothing from elsewhere", () =>
    Effect.gen(function*() {
      yield* step(() => page.goto(`${url}#tally`))
      yield* step(() => page.focus("#tab-tally"))
      yield* step(() => page.keyboard.press("ArrowRight"))
      yield* step(() => page.waitForSelector("#audit-table"))
      expect(yield* step(() => page.evaluate(() => document.activeElement?.id))).toBe("tab-audit")
      expect(yield* step(() => page.getAttribute("#tab-audit", "aria-selected"))).toBe("true")
      // 200% zoom of a 1280-pixel window: the same page laid out in 640 CSS pixels at scale 2.
      const zoomed = yield* step(async () => {
        const p = await browser!.context.newPage()
        await p.setViewportSize({ width: 640, height: 900 })
        await p.goto(`${url}#ledger`)
        await p.waitForSelector("#stats-table tbody tr")
        await p.screenshot({ path: join(shots, "ledger-narrow.png"), fullPage: true })
        const widths = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
        await p.close()
        return widths
      })
      expect(zoomed.scroll).toBeLessThanOrEqual(zoomed.client + 1)
      const zoomedSpend = yield* step(async () => {
        const p = await browser!.context.newPage()
        await p.setViewportSize({ width: 640, height: 900 })
        await p.goto(`${url}#spend`)
        await p.waitForSelector("#spend-summary strong")
        const widths = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
        await p.close()
        return widths
      })
      expect(zoomedSpend.scroll).toBeLessThanOrEqual(zoomedSpend.client + 1)
      // Offline: nothing the page loaded came from anywhere but the console itself.
      expect(requested.length).toBeGreaterThan(10)
      expect(requested.filter((u) => !u.startsWith(url))).toEqual([])
    }), 300_000)
})
