/// <reference lib="dom" />
// The budgets-and-ledger view: the hash-chain verdict (`mandate ledger verify`), what remains of
// each limit, decisions by reason code, the same grouping `mandate ledger stats` prints, and the
// replay diff (`mandate ledger replay`). Spend over time is its own view (spend.ts); the ledger's
// lines are another (`linesView`), read a page at a time.
import type { LedgerLines, LedgerView, StoreLimits } from "../api.js"
import { hbars } from "./charts.js"
import { api, errorLine, fill, h, humanUtc, ident, who } from "./dom.js"

const table = (caption: string, cols: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Node | string | number>>, id?: string, box?: "tall") =>
  h("div", { class: box === undefined ? "scroll" : "scroll tall" }, h("table", { ...(id ? { id } : {}) },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))))

const meter = (used: string, limit: string) => {
  const l = Number(limit)
  const frac = l > 0 ? Math.min(1, Number(used) / l) : 1
  return h("span", { class: "meter", role: "img", "aria-label": `${Math.round(frac * 100)}% used` }, h("span", { style: `width:${(frac * 100).toFixed(1)}%` }))
}

/** The executor store's `count` and `total` limits (Writ section 9), a page at a time. */
const storeLimits = () => {
  const body = h("tbody", { id: "store-limits-rows" })
  const more = h("button", { type: "button", hidden: true }, "More limits")
  let next: string | null = ""
  const load = async () => {
    if (next === null) return
    try {
      const page = await api<StoreLimits>(`/api/store-limits?after=${encodeURIComponent(next)}`)
      body.append(...page.limits.map((l) => h("tr", {},
        // `writ/count/<writ id>`: the id shown short, the whole key in the tooltip and data-id.
        h("td", { class: "ident", title: l.key, "data-id": l.key }, l.key.split("/").map((p, i) => (i === 2 && p.length > 12 ? `${p.slice(0, 10)}…` : p)).join("/")),
        [l.unit, l.limit, l.used, l.remaining].map((c) => h("td", {}, c)), h("td", {}, meter(l.used, l.limit)))))
      next = page.next
      more.hidden = next === null
    } catch (e) {
      body.append(h("tr", {}, h("td", { colspan: 6 }, errorLine(e))))
      next = null
    }
  }
  more.addEventListener("click", () => void load())
  void load()
  return h("section", { "aria-label": "writ count and total" },
    h("h3", {}, "Writ count and total stores (the executor's)"),
    h("div", { class: "scroll" }, h("table", { id: "store-limits" },
      h("caption", {}, "Each writ's count (uses) and total bounds as the executor consumed them"),
      h("thead", {}, h("tr", {}, ["limit key", "unit", "limit", "used", "remaining", ""].map((c) => h("th", { scope: "col" }, c)))),
      body)),
    more)
}

export const ledgerView = async (root: HTMLElement, hasLedger: boolean, hasStore: boolean) => {
  const writLimits = hasStore ? storeLimits() : null
  if (!hasLedger) return fill(root, h("h2", {}, "Budgets"), writLimits, h("p", {}, "No ledger given (start with --ledger FILE)."))
  fill(root, h("h2", {}, "Budgets and the ledger"), h("p", { role: "status" }, "loading…"))
  let v: LedgerView
  try {
    v = await api<LedgerView>("/api/ledger")
  } catch (e) {
    return fill(root, h("h2", {}, "Budgets and the ledger"), writLimits, errorLine(e))
  }
  const c = v.chain
  fill(root,
    h("h2", {}, `Budgets and the ledger: ${v.ledger}`),
    h("p", { id: "chain-verdict", class: `verdict ${c.ok ? "v-valid" : "v-unverifiable"}`, role: "status" },
      c.ok ? ["✓ hash chain intact: ", String(c.lines), " lines, head ", ident(c.head)] : ["✗ hash chain broken: ", h("strong", {}, c.reason ?? "?"), ` — ${c.detail ?? ""}`]),
    h("p", { id: "stats-summary" }, v.stats.summary),
    h("div", { class: "cols wide-left" }, h("div", {}, h("section", { "aria-label": "limits" },
      h("h3", {}, "Remaining per ledger budget"),
      v.limits.length === 0 ? h("p", { class: "muted" }, "No limit was drawn on in this ledger.") :
        table("Each limit the guard reserved against, with what its store records as used", ["limit key", "unit", "limit", "used", "remaining", ""],
          v.limits.map((l) => [l.key, l.unit, l.limit, l.used, l.remaining, meter(l.used, l.limit)]), "limits-table")),
    writLimits),
    h("section", { "aria-label": "decisions by reason" },
      h("h3", {}, "Decisions by reason code"),
      hbars("Decisions by reason code", v.decisions.map((d) => ({ label: `${d.protocol}: ${d.reason}`, value: d.count }))))),
    h("div", { class: "cols wide-left" }, h("section", { "aria-label": "ledger stats" },
      h("h3", {}, "By protocol, principal and reason (as mandate ledger stats)"),
      table("mandate ledger stats", ["protocol", "principal", "reason", "count", "tokens", "usd"],
        v.stats.rows.map((r) => [r.protocol, who(r.principal), r.reason, r.count, r.tokens, r.usd]), "stats-table", "tall")),
    h("section", { "aria-label": "replay" },
      h("h3", {}, "Replay diff"),
      v.replay === null ? h("p", { class: "muted" }, "No policy given (start the console with --policy FILE to replay the ledger under it).") :
        h("div", { id: "replay" },
          h("p", {}, `${v.replay.actions} recorded actions replayed under ${v.replay.policy}: ${v.replay.unchanged} decisions unchanged.`),
          table("Changed decisions and money", ["change", "actions", "tokens", "usd"], [
            ["would deny (ran)", v.replay.newly_denied.count, v.replay.newly_denied.tokens, v.replay.newly_denied.usd],
            ["would allow (refused)", v.replay.newly_allowed.count, v.replay.newly_allowed.tokens, v.replay.newly_allowed.usd]
          ], "replay-table"),
          table("Changed decisions by reason", ["reason", "actions", "tokens", "usd"], v.replay.by_reason.map((r) => [r.reason, r.count, r.tokens, r.usd]), "replay-reasons"),
          h("p", { class: "muted" }, v.replay.note)))))
}

/** The ledger's lines, a keyset page at a time ("More lines" asks for the next). */
export const linesView = (root: HTMLElement, hasLedger: boolean) => {
  if (!hasLedger) return fill(root, h("h2", {}, "Ledger lines"), h("p", {}, "No ledger given (start with --ledger FILE)."))
  const body = h("tbody", { id: "ledger-lines-rows" })
  const more = h("button", { type: "button", id: "ledger-lines-more", hidden: true }, "More lines")
  const status = h("p", { id: "ledger-lines-status", role: "status", "aria-live": "polite" })
  let next: string | null = "-1"
  let shown = 0
  const load = async () => {
    if (next === null) return
    more.disabled = true
    try {
      const page = await api<LedgerLines>(`/api/ledger/lines?after=${encodeURIComponent(next)}&limit=50`)
      body.append(...page.lines.map((l) => h("tr", { "data-type": l.type },
        h("td", { class: "num" }, l.seq),
        h("td", { title: l.at, class: "nowrap" }, humanUtc(l.at)),
        h("td", {}, l.type),
        h("td", {}, l.principal === null ? "" : who(l.principal)),
        h("td", {}, l.summary))))
      shown += page.lines.length
      next = page.next
      more.hidden = next === null
      status.textContent = `${shown} lines shown${next === null ? " (the whole ledger)" : ""}`
    } catch (e) {
      body.append(h("tr", {}, h("td", { colspan: 5 }, errorLine(e))))
      next = null
    } finally {
      more.disabled = false
    }
  }
  more.addEventListener("click", () => void load())
  fill(root, h("h2", {}, "Ledger lines"),
    h("div", { class: "scroll tall lines" }, h("table", { id: "ledger-lines" },
      h("caption", {}, "Every line of the ledger, oldest first, fifty at a time"),
      h("thead", {}, h("tr", {}, ["#", "time", "type", "principal", "what"].map((c) => h("th", { scope: "col" }, c)))),
      body)),
    status, more)
  void load()
}
