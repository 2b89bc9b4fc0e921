/// <reference lib="dom" />
// The page's small DOM helpers: elements built from data (text always as text nodes, never HTML),
// fetch of the console's JSON API, and short forms of long identifiers.

type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | ((e: Event) => void) | undefined>

/** An element with attributes (`on*` members become listeners) and children. */
export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<Child | Array<Child>>): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue
    if (typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v)
    else el.setAttribute(k, v === true ? "" : String(v))
  }
  append(el, children)
  return el
}

const append = (el: Element, children: Array<Child | Array<Child>>) => {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue
    el.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c)
  }
}

const SVG = "http://www.w3.org/2000/svg"
/** An SVG element (charts are drawn by hand). */
export const s = (tag: string, attrs: Record<string, string | number> = {}, ...children: Array<Child>): SVGElement => {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  append(el, children)
  return el
}

/** The API's error body: `{"error": reason, "detail": why}`. */
export class ApiError extends Error {
  constructor(readonly reason: string, readonly detail: string) {
    super(`${reason}: ${detail}`)
  }
}

export const api = async <A>(path: string, init?: RequestInit): Promise<A> => {
  const r = await fetch(path, init)
  const body = await r.json() as unknown
  if (!r.ok) {
    const e = body as { error?: string; detail?: string }
    throw new ApiError(e.error ?? `http_${r.status}`, e.detail ?? "")
  }
  return body as A
}

export const short = (v: string | null | undefined): string =>
  v === null || v === undefined ? "–" : v.startsWith("did:key:") ? `${v.slice(0, 14)}…${v.slice(-6)}` : v.length > 20 ? `${v.slice(0, 10)}…${v.slice(-6)}` : v

/** A full identifier shown short, the whole of it in the tooltip and to screen readers. */
export const ident = (v: string | null | undefined) => h("span", { class: "ident", title: v ?? "", "aria-label": v ?? "none" }, short(v))

/** The principals' names (`--keys`), by each form of their key: set once from /api/info. */
const names = new Map<string, string>()
export const setNames = (entries: ReadonlyArray<{ readonly id: string; readonly label: string }>) => {
  for (const e of entries) names.set(e.id, e.label)
}

/** A principal by name when its key file was given, else its id shown short; the whole id in the tooltip. */
export const who = (v: string | null | undefined) =>
  v === null || v === undefined ? "–" : h("span", { class: names.has(v) ? "who named" : "who ident", title: v, "data-id": v }, names.get(v) ?? short(v))

/** ISO text as a person reads it: `2026-12-03 07:57:57 UTC` (the whole instant in the tooltip). */
export const humanUtc = (iso: string): string => {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d(?::\d\d)?)/.exec(iso)
  return m === null ? iso : `${m[1]} ${m[2]} UTC`
}

export const errorLine = (e: unknown) =>
  h("p", { class: "error", role: "alert" }, e instanceof ApiError ? `error: ${e.reason}: ${e.detail}` : `error: ${String(e)}`)

/** Replaces the children of `el`. */
export const fill = (el: Element, ...children: Array<Child | Array<Child>>) => {
  el.replaceChildren()
  append(el, children)
}
