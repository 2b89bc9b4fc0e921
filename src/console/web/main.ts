/// <reference lib="dom" />
// The console page: three views behind a keyboard-operable tab list (arrow keys move between tabs,
// as the WAI-ARIA tabs pattern has it); the address's #fragment names the view, so a view can be
// linked to and reloaded.
import type { ConsoleInfo } from "../api.js"
import { auditView } from "./audit.js"
import { api, errorLine, fill, h, setNames } from "./dom.js"
import { ledgerView, linesView } from "./ledger.js"
import { spendView } from "./spend.js"
import { tallyView } from "./tally.js"

type View = "tally" | "audit" | "spend" | "ledger" | "lines"
const views: ReadonlyArray<{ id: View; label: string }> = [
  { id: "tally", label: "Tally trees" },
  { id: "audit", label: "Audit" },
  { id: "spend", label: "Spend" },
  { id: "ledger", label: "Budgets & ledger" },
  { id: "lines", label: "Ledger lines" }
]

const start = async () => {
  const app = document.getElementById("app")!
  const panel = h("main", { id: "panel", role: "tabpanel", tabindex: "-1" })
  let info: ConsoleInfo
  try {
    info = await api<ConsoleInfo>("/api/info")
  } catch (e) {
    return fill(app, errorLine(e))
  }
  setNames(info.names)
  const tabs = views.map((v) => h("button", { role: "tab", id: `tab-${v.id}`, "aria-controls": "panel", type: "button" }, v.label))
  const show = (id: View, focus = false) => {
    tabs.forEach((t, i) => {
      const on = views[i].id === id
      t.setAttribute("aria-selected", String(on))
      t.tabIndex = on ? 0 : -1
      if (on && focus) t.focus()
    })
    panel.setAttribute("aria-labelledby", `tab-${id}`)
    if (location.hash !== `#${id}`) history.replaceState(null, "", `#${id}`)
    if (id === "tally") tallyView(panel)
    else if (id === "audit") info.store === null ? fill(panel, h("h2", {}, "Audit record"), h("p", {}, "No store given (start with --store FILE).")) : auditView(panel)
    else if (id === "spend") info.store === null && info.ledger === null ? fill(panel, h("h2", {}, "Spend"), h("p", {}, "No store nor ledger given (start with --store FILE or --ledger FILE).")) : void spendView(panel)
    else if (id === "lines") linesView(panel, info.ledger !== null)
    else void ledgerView(panel, info.ledger !== null, info.store !== null)
  }
  tabs.forEach((t, i) => {
    t.addEventListener("click", () => show(views[i].id))
    t.addEventListener("keydown", (e) => {
      const k = (e as KeyboardEvent).key
      const j = k === "ArrowRight" ? (i + 1) % views.length : k === "ArrowLeft" ? (i + views.length - 1) % views.length : k === "Home" ? 0 : k === "End" ? views.length - 1 : -1
      if (j >= 0) { e.preventDefault(); show(views[j].id, true) }
    })
  })
  fill(app,
    h("header", {},
      h("h1", {}, "Mandate console"),
      h("p", { class: "muted" }, `store ${info.store ?? "none"} · ledger ${info.ledger ?? "none"}${info.policy ? ` · replay policy ${info.policy}` : ""} · read-only`),
      h("nav", { role: "tablist", "aria-label": "views" }, tabs)),
    panel)
  const initial = views.find((v) => `#${v.id}` === location.hash)?.id ?? "tally"
  show(initial)
  window.addEventListener("hashchange", () => {
    const v = views.find((x) => `#${x.id}` === location.hash)
    if (v) show(v.id)
  })
}

void start()
