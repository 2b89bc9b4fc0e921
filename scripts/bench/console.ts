// `npm run bench -- console [--rows N]`: a store of 1,000,000 audit rows. Measured in the
// same run, each the median of several rounds:
//   baseline  a plain `SELECT count(*) FROM writ_audit` on the store (better-sqlite3, read-only);
//   api       the console's first audit page (`GET /api/audit`, 100 rows) over HTTP on loopback;
//   paint     in Chromium (when /usr/bin/chromium exists): from navigation start to the first frame
//             after the audit table's first rows are in the document, i.e. the first paint that
//             shows rows (page, bundle, API call and drawing included; measured in the page with
//             performance.now and requestAnimationFrame, not with paint timing entries);
//   scroll    the page scrolled to its end ten times: rows in the document and rows the store was
//             asked for stay at pages x 100, never the table.
// The last line: `console: first page A ms, first rows painted P ms, count(*) C ms (first page R x count(*))`.
import { NodeContext } from "@effect/platform-node"
import Database from "better-sqlite3"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { serveConsole } from "../../src/console/listen.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const time = async (f: () => unknown): Promise<number> => { const t = performance.now(); await f(); return performance.now() - t }

const fill = (file: string, rows: number) => {
  const db = new Database(file)
  const insert = db.prepare("INSERT INTO writ_audit (time, entry) VALUES (?, ?)")
  const reasons = [null, null, null, "count_exhausted", "out_of_bounds", "revoked"]
  const outcomes = ["ok", "ok", "failed", "error"]
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const t = 1_790_000_000 + Math.floor(i / 10)
      insert.run(t, JSON.stringify({
        time: t, kind: i % 7 === 0 ? "revoke" : "call", identity: `id-${i}`, unparsed: null,
        principal: `did:key:z6Mk${i % 13}`, peer: null, root: null, leaf: `leaf-${i % 101}`,
        op: i % 3 === 0 ? "travel/book" : "travel/charge", outcome: outcomes[i % 4], reason: reasons[i % 6], signed: null
      }))
    }
  })()
  db.close()
}

export const run = async (args: ReadonlyArray<string>) => {
  const at = args.indexOf("--rows")
  const rows = at >= 0 ? Number(args[at + 1]) : 1_000_000
  const rounds = 7
  const dir = mkdtempSync(join(tmpdir(), "mandate-bench-console-"))
  const file = join(dir, "store.sqlite")
  const scope = Effect.runSync(Scope.make())
  try {
    // The executor's own tables (its migrations), then the rows in one transaction.
    await Effect.runPromise(Effect.scoped(Layer.build(SqliteWrit.layer(file))))
    const filled = await time(() => fill(file, rows))
    console.log(`store: ${rows} audit rows written in ${(filled / 1000).toFixed(1)} s`)

    const ro = new Database(file, { readonly: true })
    const count = () => ro.prepare("SELECT count(*) AS n FROM writ_audit").get() as { n: number }
    count()
    const counts: Array<number> = []
    for (let i = 0; i < rounds; i++) counts.push(await time(count))
    const baseline = median(counts)
    ro.close()

    const served = await Effect.runPromise(serveConsole({ store: Option.some(file), ledger: Option.none(), policy: Option.none() }, { port: 0 }).pipe(
      Effect.provide(NodeContext.layer), Scope.extend(scope)))
    const get = async (path: string) => {
      const r = await fetch(`${served.url}${path}`)
      const body = await r.json() as { rows?: Array<unknown>; error?: string }
      if (!r.ok) throw new Error(`${path}: ${body.error}`)
      return body
    }
    await get("api/audit")
    const firstPage: Array<number> = []
    for (let i = 0; i < rounds; i++) firstPage.push(await time(() => get("api/audit")))
    const api = median(firstPage)
    const variants: Array<[string, string]> = [
      ["filter reason=count_exhausted", "api/audit?reason=count_exhausted"],
      ["filter op=travel/book, outcome=failed", "api/audit?op=travel/book&outcome=failed"],
      ["sort time desc (time has no index)", "api/audit?sort=time&dir=desc"],
      ["a page 100,000 rows in (keyset cursor)", `api/audit?after=${encodeURIComponent(JSON.stringify([100_000, 100_000]))}`]
    ]
    const variantTimes: Array<[string, number]> = []
    for (const [label, path] of variants) {
      const xs: Array<number> = []
      for (let i = 0; i < 3; i++) xs.push(await time(() => get(path)))
      variantTimes.push([label, median(xs)])
    }

    let paint = Number.NaN
    let scrolled = ""
    if (existsSync("/usr/bin/chromium")) {
      const { launch } = await import("../../test/console/browser.js")
      const b = await launch()
      try {
        const paints: Array<number> = []
        for (let i = 0; i < 3; i++) {
          const page = await b.context.newPage()
          let asked = 0
          page.on("request", (r) => { if (r.url().includes("/api/audit?")) asked++ })
          await page.goto(`${served.url}#audit`, { waitUntil: "commit" })
          await page.waitForSelector("#audit-rows tr", { timeout: 120_000 })
          paints.push(await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now())))))
          if (i === 0) {
            for (let k = 0; k < 10; k++) {
              const before = await page.$$eval("#audit-rows tr", (els) => els.length)
              await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight))
              await page.waitForFunction((n) => document.querySelectorAll("#audit-rows tr").length > n, before, { timeout: 60_000 })
            }
            const inDom = await page.$$eval("#audit-rows tr", (els) => els.length)
            scrolled = `scrolled to the end 10 times: ${inDom} rows in the page, ${asked} page requests (of ${rows} rows)`
          }
          await page.close()
        }
        paint = median(paints)
      } finally {
        await b.close()
      }
    } else scrolled = "no /usr/bin/chromium: paint and scrolling not measured"

    console.log(`${rounds} rounds of each (median); baseline measured in the same run`)
    console.log(`  SELECT count(*) (baseline)            ${baseline.toFixed(1).padStart(8)} ms`)
    console.log(`  first audit page, GET /api/audit       ${api.toFixed(1).padStart(8)} ms  ${(api / baseline).toFixed(2)}x count(*)`)
    for (const [label, t] of variantTimes) console.log(`  ${label.padEnd(38)} ${t.toFixed(1).padStart(8)} ms  ${(t / baseline).toFixed(2)}x count(*)`)
    console.log(`  first rows painted in Chromium         ${Number.isNaN(paint) ? "     n/a" : paint.toFixed(1).padStart(8) + " ms"}  ${Number.isNaN(paint) ? "" : `${(paint / baseline).toFixed(2)}x count(*)`}`)
    console.log(`  ${scrolled}`)
    console.log(`  target first paint < 1000 ms: ${Number.isNaN(paint) ? "not measured" : paint < 1000 ? "met" : "NOT met"}`)
    console.log(`console: first page ${api.toFixed(1)} ms, first rows painted ${Number.isNaN(paint) ? "n/a" : paint.toFixed(0)} ms, count(*) ${baseline.toFixed(1)} ms (first page ${(api / baseline).toFixed(2)}x count(*))`)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  }
}
