/// <reference lib="dom" />
// SVG charts drawn by hand: a stacked bar chart over time and a horizontal bar chart. Colours are
// the Okabe–Ito palette (distinguishable under the common colour-vision deficiencies); every chart
// carries a text legend and a <title> per bar, and the numbers are also in a table beside it.
import { h, s } from "./dom.js"

export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

export interface Series { readonly name: string; readonly values: ReadonlyArray<number> }

const niceMax = (m: number) => {
  if (m <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(m))
  return Math.ceil(m / p) * p
}

/** Bars per bucket, stacked by series. */
export const stackedBars = (title: string, buckets: ReadonlyArray<string>, series: ReadonlyArray<Series>, unit: string) => {
  const W = 640, H = 260, L = 56, B = 48, T = 12
  const totals = buckets.map((_, i) => series.reduce((a, x) => a + (x.values[i] ?? 0), 0))
  const max = niceMax(Math.max(0, ...totals))
  const bw = buckets.length === 0 ? 0 : (W - L - 8) / buckets.length
  const y = (v: number) => T + (H - T - B) * (1 - v / max)
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title))
  for (const f of [0, 0.5, 1]) {
    svg.append(s("line", { x1: L, x2: W - 4, y1: y(max * f), y2: y(max * f), class: "grid" }))
    svg.append(s("text", { x: L - 6, y: y(max * f) + 4, "text-anchor": "end", class: "axis" }, String(Math.round(max * f))))
  }
  buckets.forEach((b, i) => {
    let base = 0
    series.forEach((x, k) => {
      const v = x.values[i] ?? 0
      if (v <= 0) return
      const top = y(base + v)
      svg.append(s("rect", { x: L + i * bw + 2, y: top, width: Math.max(1, bw - 4), height: y(base) - top, fill: PALETTE[k % PALETTE.length], stroke: "#fff", "stroke-width": 1 },
        s("title", {}, `${b}: ${x.name} ${v} ${unit}`)))
      base += v
    })
    if (buckets.length <= 12 || i % Math.ceil(buckets.length / 12) === 0) {
      svg.append(s("text", { x: L + i * bw + bw / 2, y: H - B + 16, "text-anchor": "middle", class: "axis" }, b.slice(5, 13).replace("T", " ")))
    }
  })
  return h("figure", { class: "figure" }, h("figcaption", {}, `${title}; the vertical axis is in ${unit}`), svg, legend(series.map((x) => x.name)))
}

export const legend = (names: ReadonlyArray<string>) =>
  h("ul", { class: "legend" }, names.map((n, k) =>
    h("li", {}, h("span", { class: "swatch", style: `background:${PALETTE[k % PALETTE.length]}`, "aria-hidden": "true" }), n)))

/** One horizontal bar per item, labelled with its value. */
export const hbars = (title: string, items: ReadonlyArray<{ label: string; value: number }>) => {
  const W = 640, row = 26, L = 260
  const H = Math.max(1, items.length) * row + 8
  const max = niceMax(Math.max(0, ...items.map((i) => i.value)))
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title))
  items.forEach((it, i) => {
    const w = ((W - L - 60) * it.value) / max
    svg.append(s("text", { x: L - 8, y: i * row + 20, "text-anchor": "end", class: "label" }, it.label))
    svg.append(s("rect", { x: L, y: i * row + 6, width: Math.max(1, w), height: row - 10, fill: PALETTE[i % PALETTE.length] }, s("title", {}, `${it.label}: ${it.value}`)))
    svg.append(s("text", { x: L + w + 6, y: i * row + 20, class: "label" }, String(it.value)))
  })
  return h("figure", { class: "figure" }, svg)
}
