/// <reference lib="dom" />
// The spend view: what the agents spent, one unit at a time (USD, tokens, uses, a Writ bound's
// integers: never added across units), from one record at a time (the ledger, or the executor's
// store: two records of the same calls are never added either), as bars over time stacked by
// protocol, principal or budget, and the totals behind them. Sums are the server's, exact; the
// bars are drawn from them as numbers.
import type { SpendBucket, SpendPoint, SpendSource, SpendView } from "../api.js"
import { stackedBars } from "./charts.js"
import { api, errorLine, fill, h } from "./dom.js"

type GroupBy = "protocol" | "principal" | "budget"

const sourceName: Record<SpendSource, string> = { ledger: "the ledger", store: "the executor's store" }

const select = (id: string, values: ReadonlyArray<string>, label: (v: string) => string, initial?: string) =>
  h("select", { id }, values.map((v) => h("option", { value: v, ...(v === initial ? { selected: true } : {}) }, label(v))))

export const spendView = async (root: HTMLElement) => {
  const bucket = select("spend-bucket", ["minute", "hour", "day"], (v) => `per ${v}`, "hour")
  const body = h("div", { id: "spend-body" })
  const load = async () => {
    fill(body, h("p", { role: "status" }, "loading…"))
    let v: SpendView
    try {
      v = await api<SpendView>(`/api/spend?bucket=${encodeURIComponent(bucket.value)}`)
    } catch (e) {
      return fill(body, errorLine(e))
    }
    draw(body, v, bucket)
  }
  bucket.addEventListener("change", () => void load())
  fill(root, h("h2", {}, "Spend"),
    h("p", { class: "muted" }, "What the agents spent, per principal, protocol and budget, in one unit at a time."),
    body)
  await load()
}

const draw = (body: HTMLElement, v: SpendView, bucket: HTMLSelectElement) => {
  const notes = v.notes.map((n) => h("p", { class: "error", role: "note" }, n))
  if (v.points.length === 0) return fill(body, notes, h("p", { id: "spend-empty" }, "Nothing was spent in the records given."))
  const label = new Map(v.principals.map((p) => [p.id, p.label]))
  const sources = v.sources
  const source = select("spend-source", sources, (s) => sourceName[s as SpendSource] ?? s, sources[0])
  const unit = h("select", { id: "spend-unit" })
  const by = select("spend-by", ["protocol", "principal", "budget"], (x) => x, "protocol")
  const chart = h("div", { id: "spend-chart" })
  const totals = h("div", { id: "spend-totals" })
  const summary = h("p", { id: "spend-summary" })
  const units = () => [...new Set(v.totals.filter((t) => t.source === source.value).map((t) => t.unit))].sort((a, b) => (a === "USD" ? -1 : b === "USD" ? 1 : a.localeCompare(b)))
  const fillUnits = () => {
    const keep = unit.value
    const us = units()
    fill(unit, us.map((u) => h("option", { value: u, ...(u === keep ? { selected: true } : {}) }, u)))
  }
  const name = (g: GroupBy, p: { readonly protocol: string; readonly principal: string; readonly budget: string }) =>
    g === "principal" ? label.get(p.principal) ?? p.principal : p[g]
  const redraw = () => {
    const g = by.value as GroupBy
    const mine = <A extends { readonly source: string; readonly unit: string }>(xs: ReadonlyArray<A>) => xs.filter((x) => x.source === source.value && x.unit === unit.value)
    const points: ReadonlyArray<SpendPoint> = mine(v.points)
    const buckets = [...new Set(points.map((p) => p.bucket))].sort()
    const names = [...new Set(points.map((p) => name(g, p)))].sort()
    const series = names.map((n) => ({ name: n, values: buckets.map((b) => points.filter((p) => p.bucket === b && name(g, p) === n).reduce((a, p) => a + Number(p.amount), 0)) }))
    fill(chart, stackedBars(`${unit.value} spent per ${v.bucket} by ${g}, from ${sourceName[source.value as SpendSource]}`, buckets, series, unit.value, v.bucket === ("day" satisfies SpendBucket)))
    // Totals: the server's exact sums, one row per protocol, principal and budget.
    const rows = mine(v.totals)
    const total = v.units.find((u) => u.source === source.value && u.unit === unit.value)
    if (total === undefined) fill(summary)
    else {
      fill(summary, h("strong", {}, `${total.amount} ${unit.value}`),
        ` spent in all (${total.count} ${total.count === 1 ? "entry" : "entries"}, from ${sourceName[source.value as SpendSource]}): `,
        total.protocols.map((p) => `${p.protocol} ${p.amount}`).join(", "))
    }
    fill(totals, h("div", { class: "scroll" }, h("table", { id: "spend-table" },
      h("caption", {}, `${unit.value} spent over the whole record, exact`),
      h("thead", {}, h("tr", {}, ["protocol", "principal", "budget", "amount", "unit", "entries"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((r) => h("tr", { "data-principal": r.principal },
        h("td", {}, r.protocol),
        h("td", { title: r.principal }, label.get(r.principal) ?? r.principal),
        h("td", { class: "ident", title: r.budget }, r.budget),
        h("td", { class: "num" }, r.amount),
        h("td", {}, r.unit),
        h("td", { class: "num" }, r.count)))))))
  }
  source.addEventListener("change", () => { fillUnits(); redraw() })
  unit.addEventListener("change", redraw)
  by.addEventListener("change", redraw)
  fillUnits()
  redraw()
  fill(body, notes,
    h("div", { class: "controls" }, h("label", {}, "record ", source), h("label", {}, "unit ", unit), h("label", {}, "stack by ", by), h("label", {}, "time ", bucket)),
    summary, chart, totals)
}
