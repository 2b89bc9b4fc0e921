/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The audit view (Writ section 9.3): the executor's record as a table, filtered and sorted by the
// server, loaded one keyset page at a time as the reader scrolls (or presses "Load more"), so a
// store of millions of entries never reaches the page whole.
import type { AuditCount, AuditPage, AuditRowView, AuditSort } from "../api.js"
import { api, errorLine, fill, h, humanUtc, who } from "./dom.js"

const columns: ReadonlyArray<{ key: AuditSort; label: string }> = [
  { key: "seq", label: "#" },
  { key: "time", label: "time" },
  { key: "kind", label: "kind" },
  { key: "op", label: "op" },
  { key: "outcome", label: "outcome" },
  { key: "reason", label: "reason" },
  { key: "principal", label: "principal" }
]

const row = (r: AuditRowView) =>
  h("tr", { "data-reason": r.reason ?? "", "data-outcome": r.outcome },
    h("td", { class: "num" }, r.seq),
    // The executor's time is integer Unix seconds (section 9.3); shown as UTC, the number in the tooltip.
    h("td", { class: "num nowrap", title: String(r.time) }, humanUtc(new Date(r.time * 1000).toISOString())),
    h("td", {}, r.kind),
    h("td", {}, r.op ?? "–"),
    h("td", { class: `outcome o-${r.outcome}` }, r.outcome),
    h("td", {}, r.reason ?? ""),
    h("td", {}, who(r.principal)))

export const auditView = (root: HTMLElement) => {
  const field = (name: string, label: string, type = "text") =>
    h("label", {}, label, h("input", { name, type, id: `f-${name}`, autocomplete: "off" }))
  const kind = h("select", { name: "kind", id: "f-kind" }, h("option", { value: "" }, "any"), h("option", { value: "call" }, "call"), h("option", { value: "revoke" }, "revoke"))
  const form = h("form", { class: "filters", id: "audit-filters", "aria-label": "audit filters" },
    h("label", {}, "kind", kind),
    field("outcome", "outcome"), field("reason", "reason"), field("op", "op prefix"), field("principal", "principal (did:key)"),
    field("since", "time from (Unix s)", "number"), field("until", "time before (Unix s)", "number"),
    h("button", { type: "submit", id: "apply-filters" }, "Apply"),
    h("button", { type: "reset", id: "clear-filters" }, "Clear"))
  let sort: AuditSort = "seq"
  let dir: "asc" | "desc" = "asc"
  let next: string | null = null
  let generation = 0
  let loading = false
  const body = h("tbody", { id: "audit-rows" })
  const status = h("p", { id: "audit-status", role: "status", "aria-live": "polite" })
  const count = h("span", { id: "audit-count" })
  const more = h("button", { type: "button", id: "audit-more" }, "Load more")
  const head = h("tr", {})
  const query = () => {
    const p = new URLSearchParams()
    for (const [k, v] of new FormData(form).entries()) if (typeof v === "string" && v !== "") p.set(k, v)
    return p
  }
  const drawHead = () =>
    fill(head, columns.map((c) =>
      h("th", { scope: "col", "aria-sort": c.key === sort ? (dir === "asc" ? "ascending" : "descending") : "none" },
        h("button", { type: "button", class: "sort", "data-sort": c.key, onclick: () => {
          dir = c.key === sort && dir === "asc" ? "desc" : "asc"
          sort = c.key
          void reset()
        } }, c.label, c.key === sort ? (dir === "asc" ? " ▲" : " ▼") : ""))))
  const loadPage = async () => {
    if (loading || next === null) return
    loading = true
    const mine = generation
    const p = query()
    p.set("sort", sort)
    p.set("dir", dir)
    if (next !== "") p.set("after", next)
    try {
      const page = await api<AuditPage>(`/api/audit?${p.toString()}`)
      if (mine !== generation) return
      body.append(...page.rows.map(row))
      next = page.next
      more.hidden = next === null
      fill(status, `${body.rows.length} shown${next === null ? ", all loaded" : ", more on scroll"}`)
    } catch (e) {
      fill(status, errorLine(e))
      next = null
    } finally {
      loading = false
    }
  }
  const reset = async () => {
    generation++
    next = ""
    body.replaceChildren()
    drawHead()
    fill(count, "")
    await loadPage()
    // The count scans the matching rows: asked after the first page is on screen.
    const mine = generation
    api<AuditCount>(`/api/audit/count?${query().toString()}`).then(
      (c) => { if (mine === generation) fill(count, `(${c.count} matching ${c.count === 1 ? "entry" : "entries"})`) },
      () => undefined
    )
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); void reset() })
  form.addEventListener("reset", () => setTimeout(() => void reset(), 0))
  more.addEventListener("click", () => void loadPage())
  const sentinel = h("div", { class: "sentinel", "aria-hidden": "true" })
  new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) void loadPage() }).observe(sentinel)
  fill(root,
    h("h2", {}, "Audit record ", count),
    h("p", { class: "muted" }, "Every call and revoke the executor saw (section 9.3), with its outcome and reason code. Filters and sorting run in the store; rows arrive a page at a time."),
    form,
    h("div", { class: "scroll" }, h("table", { class: "audit", id: "audit-table" }, h("caption", {}, "Audit entries"), h("thead", {}, head), body)),
    status, more, sentinel)
  void reset()
}

export { errorLine }
