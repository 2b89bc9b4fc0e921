/// <reference lib="dom" />
// SVG charts drawn by hand: a stacked bar chart over time and a horizontal bar chart. Colours are
// the Okabe–Ito palette (distinguishable under the common colour-vision deficiencies); every chart
// carries a text legend and a <title> per bar, and the numbers are also in a table beside it.
import { h, s } from "./dom.js"

export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

export interface Series { readonly name: string; readonly values: ReadonlyArray<number> }

/** Axis ticks from 0 to a round maximum at or above `m`: steps of 1, 2 or 5 times a power of ten,
 * each label printed with as many decimals as the step needs, so no two labels read the same
 * (rounding every tick to an integer printed "0, 1, 1" for a maximum of 1). */
export const ticks = (m: number, target = 4): { readonly max: number; readonly values: ReadonlyArray<number>; readonly labels: ReadonlyArray<string> } => {
  if (!(m > 0) || !Number.isFinite(m)) return { max: 1, values: [0, 1], labels: ["0", "1"] }
  const raw = m / target
  const p = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw) ?? 10 * p
  const n = Math.max(1, Math.ceil(m / step - 1e-9))
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9))
  const values = Array.from({ length: n + 1 }, (_, i) => i * step)
  return { max: n * step, values, labels: values.map((v) => v.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals })) }
}

const niceMax = (m: number) => ticks(m).max

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/** A bucket's start (ISO text) as a person reads it, in UTC: "3 Dec 07:00", a day as "3 Dec 2026". */
export const humanTime = (iso: string, day = false): string => {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return iso
  const d = new Date(t)
  const date = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`
  if (day) return `${date} ${d.getUTCFullYear()}`
  return `${date} ${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`
}

/** Bars per bucket, stacked by series; buckets are ISO instants, labelled in UTC. */
export const stackedBars = (title: string, buckets: ReadonlyArray<string>, series: ReadonlyArray<Series>, unit: string, day = false) => {
  const W = 640, H = 240, L = 72, B = 40, T = 12
  const totals = buckets.map((_, i) => series.reduce((a, x) => a + (x.values[i] ?? 0), 0))
  const axis = ticks(Math.max(0, ...totals))
  const max = axis.max
  const bw = buckets.length === 0 ? 0 : Math.min(80, (W - L - 8) / buckets.length)
  const y = (v: number) => T + (H - T - B) * (1 - v / max)
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title))
  axis.values.forEach((v, i) => {
    svg.append(s("line", { x1: L, x2: W - 4, y1: y(v), y2: y(v), class: "grid" }))
    svg.append(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, axis.labels[i]))
  })
  const every = Math.ceil(buckets.length / 8)
  buckets.forEach((b, i) => {
    let base = 0
    series.forEach((x, k) => {
      const v = x.values[i] ?? 0
      if (v <= 0) return
      const top = y(base + v)
      svg.append(s("rect", { x: L + i * bw + 2, y: top, width: Math.max(1, bw - 4), height: y(base) - top, fill: PALETTE[k % PALETTE.length], stroke: "#fff", "stroke-width": 1 },
        s("title", {}, `${humanTime(b, day)} UTC: ${x.name} ${v} ${unit}`)))
      base += v
    })
    if (i % every === 0) {
      svg.append(s("text", { x: L + i * bw + bw / 2, y: H - B + 16, "text-anchor": "middle", class: "axis" }, humanTime(b, day)))
    }
  })
  return h("figure", { class: "figure" }, h("figcaption", {}, `${title}; the vertical axis is in ${unit}, times in UTC`), svg, legend(series.map((x) => x.name)))
}

export const legend = (names: ReadonlyArray<string>) =>
  h("ul", { class: "legend" }, names.map((n, k) =>
    h("li", {}, h("span", { class: "swatch", style: `background:${PALETTE[k % PALETTE.length]}`, "aria-hidden": "true" }), n)))

/** One horizontal bar per item, labelled with its value. */
export const hbars = (title: string, items: ReadonlyArray<{ label: string; value: number }>) => {
  const W = 640, row = 22, L = 260
  const H = Math.max(1, items.length) * row + 8
  const max = niceMax(Math.max(0, ...items.map((i) => i.value)))
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title))
  items.forEach((it, i) => {
    const w = ((W - L - 60) * it.value) / max
    svg.append(s("text", { x: L - 8, y: i * row + 17, "text-anchor": "end", class: "label" }, it.label))
    svg.append(s("rect", { x: L, y: i * row + 5, width: Math.max(1, w), height: row - 8, fill: PALETTE[i % PALETTE.length] }, s("title", {}, `${it.label}: ${it.value}`)))
    svg.append(s("text", { x: L + w + 6, y: i * row + 17, class: "label" }, String(it.value)))
  })
  return h("figure", { class: "figure" }, svg)
}
