/// <reference lib="dom" />
// The tally tree view (Writ sections 6.2 and 4): open a tally or answer file (with the call it
// answers, for the full section 6.2 verdict), or pick a call from the executor's store; the tree
// is drawn hop by hop, and under each hop the chain of writs it ran under, bound by bound.
import type { CallList, HopView, TreeView } from "../api.js"
import { api, errorLine, fill, h, ident, who } from "./dom.js"

const verdictText: Record<HopView["verdict"], string> = {
  valid: "✓ valid",
  signed_unauthorized: "✗ signed_unauthorized",
  unverifiable: "✗ unverifiable",
  unchecked: "? not checked"
}

const badge = (v: HopView["verdict"]) => h("span", { class: `badge v-${v}` }, verdictText[v])

const narrowingTable = (hop: HopView) =>
  hop.chain.length === 0
    ? h("p", { class: "muted" }, "The chain above this hop is not known (give the call to see it).")
    : h("div", { class: "scroll" }, h("table", { class: "narrowing" },
      h("caption", {}, "Chain of writs under this hop, root first: each column is a writ, each row a bound; ▼ marks what a delegation narrowed"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "bound"), hop.chain.map((w, i) =>
        h("th", { scope: "col" }, i === 0 ? "root " : `hop ${i} `, ident(w.id), h("br"), "held by ", who(w.hld))))),
      h("tbody", {}, hop.narrowing.map((r) =>
        h("tr", {}, h("th", { scope: "row" }, r.name), r.values.map((v, i) =>
          h("td", { class: r.narrowedAt.includes(i) ? "narrowed" : "" }, r.narrowedAt.includes(i) ? "▼ " : "", v ?? "—")))))))

const hopCard = (hop: HopView, depth: number): HTMLElement => {
  const id = `hop-${hop.path.replace(/[^a-z0-9]/gi, "-") || "top"}`
  const body = h("div", { class: "hop-body", id: `${id}-body` },
    hop.failsHere ? h("p", { class: "fails", role: "note" }, "✗ the tree fails here: ", h("strong", {}, hop.reason ?? "?"), hop.detail ? ` — ${hop.detail}` : "") : null,
    hop.verdict !== "valid" && !hop.failsHere && hop.reason ? h("p", { class: "fails soft" }, `the subtree under this hop fails section 6.2: ${hop.reason}${hop.detail ? ` — ${hop.detail}` : ""}`) : null,
    h("dl", { class: "facts" },
      h("dt", {}, "op"), h("dd", {}, hop.op),
      h("dt", {}, "status"), h("dd", {}, hop.st, hop.err ? ` (${hop.err})` : ""),
      h("dt", {}, "used"), h("dd", {}, hop.used.length === 0 ? "nothing" : hop.used.map((u) => `${u.name} ${u.amount}`).join(", ")),
      h("dt", {}, "signer"), h("dd", {}, hop.signer === null ? "unknown" : who(hop.signer)),
      h("dt", {}, "tally"), h("dd", {}, ident(hop.tally)),
      h("dt", {}, "writ"), h("dd", {}, ident(hop.writ)),
      h("dt", {}, "accepted at"), h("dd", {}, String(hop.acc))),
    narrowingTable(hop),
    hop.sub.length > 0 ? h("ol", { class: "subs", "aria-label": `sub-tallies of ${hop.op}` }, hop.sub.map((s) => h("li", {}, hopCard(s, depth + 1)))) : null)
  const toggle = h("button", {
    class: "hop-head", "aria-expanded": "true", "aria-controls": `${id}-body`,
    onclick: (e: Event) => {
      const b = e.currentTarget as HTMLButtonElement
      const open = b.getAttribute("aria-expanded") !== "true"
      b.setAttribute("aria-expanded", String(open))
      body.hidden = !open
    }
  }, h("span", { class: "hop-op" }, depth === 0 ? "top " : `hop ${depth} `, hop.op), " · ", hop.st, hop.err ? ` (${hop.err})` : "", " ", badge(hop.verdict))
  return h("section", { class: `hop${hop.failsHere ? " failing" : ""}`, "data-path": hop.path, "data-verdict": hop.verdict, "aria-label": `hop ${hop.op}` }, toggle, body)
}

export const drawTree = (t: TreeView) =>
  h("div", { class: "tree", "data-verdict": t.verdict, "data-source": t.source },
    h("p", { class: `verdict v-${t.verdict}`, role: "status" }, "Section 6.2 verdict for the whole tree: ", badge(t.verdict),
      t.reason ? [" — ", h("strong", {}, t.reason), t.path ? ` at ${t.path}` : "", t.detail ? `: ${t.detail}` : ""] : "",
      t.verdict === "unchecked" ? " (give the call this tally answers for the full check)" : ""),
    h("p", { class: "muted" }, `source: ${t.source}`),
    hopCard(t.root, 0))

const readFile = (input: HTMLInputElement): Promise<{ name: string; text: string } | undefined> => {
  const f = input.files?.[0]
  return f === undefined ? Promise.resolve(undefined) : f.text().then((text) => ({ name: f.name, text }))
}

export const tallyView = (root: HTMLElement) => {
  const out = h("div", { id: "tree-out", "aria-live": "polite" })
  const tallyInput = h("input", { type: "file", id: "tally-file", accept: ".json,application/json" })
  const callInput = h("input", { type: "file", id: "call-file", accept: ".json,application/json" })
  const open = async (e: Event) => {
    e.preventDefault()
    const t = await readFile(tallyInput)
    if (t === undefined) return fill(out, errorLine("choose a tally or answer file first"))
    const c = await readFile(callInput)
    try {
      const tree = await api<TreeView>("/api/tally", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: t.name, tally: t.text, ...(c ? { call: c.text } : {}) }) })
      fill(out, drawTree(tree))
    } catch (err) {
      fill(out, errorLine(err))
    }
  }
  const calls = h("ul", { class: "calls", id: "store-calls" })
  const pick = async (leaf: string, id: string) => {
    try {
      fill(out, drawTree(await api<TreeView>(`/api/calls/tree?leaf=${encodeURIComponent(leaf)}&id=${encodeURIComponent(id)}`)))
    } catch (err) {
      fill(out, errorLine(err))
    }
  }
  const more = h("button", { type: "button", hidden: true }, "More calls")
  let next: string | null = ""
  const load = async () => {
    if (next === null) return
    try {
      const page = await api<CallList>(`/api/calls?after=${encodeURIComponent(next)}`)
      for (const c of page.calls) {
        calls.append(h("li", {}, h("button", { type: "button", class: "link", onclick: () => pick(c.leaf, c.id) },
          `${c.op} · ${c.st ?? c.state}${c.reason ? ` (${c.reason})` : ""} · acc ${c.acc}`)))
      }
      next = page.next
      more.hidden = next === null
    } catch (err) {
      calls.append(h("li", {}, errorLine(err)))
      next = null
    }
  }
  more.addEventListener("click", load)
  fill(root,
    h("h2", {}, "Tally trees"),
    h("div", { class: "pickers" },
      h("form", { class: "panel", onsubmit: open, "aria-label": "open a tally file" },
        h("h3", {}, "Open a file"),
        h("label", { for: "tally-file" }, "Tally or answer file"), tallyInput,
        h("label", { for: "call-file" }, "The call it answers (optional: needed for the section 6.2 verdict)"), callInput,
        h("button", { type: "submit", id: "open-tally" }, "Draw the tree"),
        h("p", { class: "muted" }, "Files are read by this page and sent to the console on loopback; the console reads no path you type.")),
      h("div", { class: "panel" }, h("h3", {}, "Calls in the store"), calls, more)),
    out)
  void load()
}
