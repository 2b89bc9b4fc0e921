// `npm run bench -- tokens`: the five tasks of docs/bench-RESULTS.md against the example services
// (src/examples), YEA (what the agent reads: Lens) beside the same data as a REST-style MCP
// server would send it, as minified and as pretty JSON. Counted with a real tokenizer
// (gpt-tokenizer, o200k_base) and with the SPEC §8 estimate, side by side, in the same run.
//
// "Total input" is what a model pays for (bench-RESULTS.md): every turn re-reads the tool
// definitions, the task and the conversation so far (calls and results), and one final turn
// answers. So a task of n calls costs sum over k = 0..n of (defs + task + calls and results < k).
//
// The YEA side is real: the calls go to the example services through the client, with an agent
// grant allowing low-risk orders up to 100.00 USD each, and each result is the hardened Lens of
// the real reply. The REST side is built from the same services' data (the same events, slots,
// menu and order), shaped the way a CRUD API returns it; its 11 tool definitions are written here.
// Ids are seeded and the clock is fixed, so a run is reproducible.
import { Effect, Layer } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import * as MemoryYea from "../../src/store/memory/yea.js"
import { makeClient, lensForModel, type YeaClientShape } from "../../src/yea/client.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { calendarService, MENU, shopService } from "../../src/examples/index.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { est } from "../../src/yea/lens/estimate.js"
import { makeService } from "../../src/yea/service/runtime.js"

const NOW = 1_790_000_000 // 2026-09-21, before the calendar's meetings
const PRINCIPAL = new Uint8Array(32).fill(1)
const AGENT = new Uint8Array(32).fill(2)
const TARGET = 8714 / 12902 // bench-RESULTS.md: YEA total / REST minified total

type Counter = (text: string) => number
const o200k: Counter = (t) => encode(t).length
const estimate: Counter = est

/** One tool call and what came back, in the three renderings. */
interface Step {
  readonly call: string
  readonly yea?: string
  readonly min?: string
  readonly pretty?: string
}

interface Side {
  readonly defs: string
  readonly steps: ReadonlyArray<{ readonly call: string; readonly result: string }>
}

const totalInput = (count: Counter, task: string, side: Side): { total: number; results: number } => {
  const fixed = count(side.defs) + count(task)
  let total = fixed
  let so_far = 0
  for (const s of side.steps) {
    so_far += count(s.call) + count(s.result)
    total += fixed + so_far
  }
  return { total, results: side.steps.reduce((n, s) => n + count(s.result), 0) }
}

// ---- the REST-style MCP server's tools (11), as an MCP tools/list would show them -----------------

const tool = (name: string, description: string, properties: Record<string, unknown>, required: ReadonlyArray<string> = []) => ({
  name,
  description,
  inputSchema: { type: "object", properties, ...(required.length > 0 ? { required } : {}) }
})
const str = (description?: string) => ({ type: "string", ...(description ? { description } : {}) })
const REST_TOOLS = [
  tool("search_events", "Search calendar events by text or day", { query: str(), day: str("YYYY-MM-DD") }),
  tool("get_event", "Get one event", { id: str() }, ["id"]),
  tool("free_slots", "Free half-hour slots on a day", { day: str("YYYY-MM-DD"), length: { type: "integer", description: "minutes" } }, ["day"]),
  tool("update_event", "Update an event's fields", { id: str(), start: str("ISO 8601"), end: str("ISO 8601"), title: str() }, ["id"]),
  tool("reschedule_event", "Move an event to its first free slot (or to start) and notify attendees", { id: str(), start: str("ISO 8601") }, ["id"]),
  tool("cancel_event", "Cancel an event and notify attendees", { id: str() }, ["id"]),
  tool("search_menu", "Search the menu", { query: str(), tag: { type: "string", enum: ["high-protein", "spicy", "vegetarian", "vegan"] }, max_cal: { type: "integer" }, limit: { type: "integer" } }),
  tool("get_menu_item", "Get one menu item", { sku: str() }, ["sku"]),
  tool("create_order", "Order meals for delivery", { items: { type: "array", items: { type: "object", properties: { sku: str(), qty: { type: "integer" } }, required: ["sku", "qty"] } }, deliver: str("YYYY-MM-DD"), speed: { type: "string", enum: ["standard", "express"] } }, ["items", "deliver"]),
  tool("get_order", "Get an order", { id: str() }, ["id"]),
  tool("cancel_order", "Cancel an order and refund it", { id: str() }, ["id"])
]

// ---- YEA's four generic tools (the MCP bridge's generic mode) -----------------------------------

const YEA_TOOLS = [
  tool("yea_ask", "Read from a YEA service (no side effects)", { service: str(), capability: str(), params: { type: "object" }, budget: { type: "integer" } }, ["service", "capability"]),
  tool("yea_intent", "Say what you want done; get proposals (or, with auto, a receipt if your grant allows)", { service: str(), capability: str(), params: { type: "object" }, auto: { type: "boolean" } }, ["service", "capability"]),
  tool("yea_commit", "Commit a proposal by id and hash", { service: str(), proposal: str(), hash: str() }, ["service", "proposal", "hash"]),
  tool("yea_expand", "Read the rest of an elided reply", { service: str(), handle: str() }, ["service", "handle"])
]

const call = (name: string, args: unknown) => JSON.stringify({ name, arguments: args })
const pretty = (v: unknown) => JSON.stringify(v, null, 2)
const min = (v: unknown) => JSON.stringify(v)
const dataOf = (r: FinalReply): unknown => (r.kind === "ANSWER" ? r.data : r)

const run_ = Effect.gen(function* () {
  const principalKey = keyFromSeed(PRINCIPAL)
  const calendar = yield* makeService(yield* calendarService([principalKey]))
  const shop = yield* makeService(yield* shopService([principalKey]))
  const grant = yield* issueRootGrant({
    sub: keyFromSeed(AGENT),
    caveats: [{ svc: ["calendar.example", "shop.example"] }, { risk: "low" }, { each: { of: "spend", max: 10000, scale: 2, unit: "USD" } }],
    nonce: "bench"
  }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(PRINCIPAL), RandomBytes.seeded(PRINCIPAL))))
  const agentLayer = Layer.merge(Signer.fromSeed(AGENT), RandomBytes.seeded(AGENT))
  const cal: YeaClientShape = yield* Effect.provide(makeClient(connectInProcess(calendar), { grants: [grant] }), agentLayer)
  const sh: YeaClientShape = yield* Effect.provide(makeClient(connectInProcess(shop), { grants: [grant] }), agentLayer)
  const briefs = [lensForModel(yield* cal.hello()), lensForModel(yield* sh.hello())]
  const yeaDefs = min(YEA_TOOLS) + "\n" + briefs.join("\n\n")
  const restDefs = min(REST_TOOLS)

  // Task 1 and 2: reschedule "1:1 with Ana" to the first free slot (the service chooses).
  const all = yield* cal.ask("calendar.find", {})
  const events = (all.kind === "ANSWER" ? all.data : []) as ReadonlyArray<{ id: string; title: string; start: string; end: string; attendees: ReadonlyArray<string> }>
  const ana = events.filter((e) => e.title.includes("Ana"))
  const moved = yield* cal.intent("calendar.reschedule", { event: "1:1 with Ana" }, { auto: true })
  if (moved.kind !== "RECEIPT") throw new Error(`reschedule: ${moved.kind} ${lensForModel(moved)}`)
  const newStart = String((moved.receipt.result as { start: string }).start)
  const day = newStart.slice(0, 10)
  const slots: Array<string> = []
  for (let t = Date.parse(`${day}T09:30:00Z`); t <= Date.parse(`${day}T17:30:00Z`); t += 1_800_000) {
    const clash = events.some((e) => e.id !== ana[0].id && Date.parse(e.start) < t + 1_800_000 && t < Date.parse(e.end))
    if (!clash) slots.push(new Date(t).toISOString().replace(".000Z", "Z"))
  }
  const updated = { ...ana[0], start: newStart, end: new Date(Date.parse(newStart) + 1_800_000).toISOString().replace(".000Z", "Z"), updated: true }
  const yeaReschedule: Step = { call: call("yea_intent", { service: "calendar.example", capability: "calendar.reschedule", params: { event: "1:1 with Ana" }, auto: true }), yea: lensForModel(moved) }
  const crud: ReadonlyArray<Step> = [
    { call: call("search_events", { query: "Ana" }), min: min(ana), pretty: pretty(ana) },
    { call: call("free_slots", { day, length: 30 }), min: min({ day, slots }), pretty: pretty({ day, slots }) },
    { call: call("update_event", { id: ana[0].id, start: updated.start, end: updated.end }), min: min(updated), pretty: pretty(updated) }
  ]
  const outcome: ReadonlyArray<Step> = [{ call: call("reschedule_event", { id: ana[0].id }), min: min(updated), pretty: pretty(updated) }]

  // Task 3: vegan meals under 700 kcal, order four.
  const veganAsk = yield* sh.ask("shop.search", { tag: "vegan", max_cal: 700 })
  const vegan = dataOf(veganAsk) as ReadonlyArray<{ sku: string; name: string }>
  const four = vegan.slice(0, 4).map((m) => ({ sku: m.sku, qty: 1 }))
  const ordered = yield* sh.intent("shop.order", { items: four, deliver: "2026-09-24" }, { auto: true })
  if (ordered.kind !== "RECEIPT") throw new Error(`order: ${ordered.kind} ${lensForModel(ordered)}`)
  // The REST server returns the same rows the service answers (the menu without its tags).
  const restVegan = vegan
  const restOrder = { id: String((ordered.receipt.result as { order: string }).order), status: "placed", deliver: "2026-09-24", items: four.map((f) => ({ ...f, name: MENU.find((m) => m.sku === f.sku)!.name })), total: (ordered.receipt.result as { total: string }).total }
  const order: { yea: ReadonlyArray<Step>; rest: ReadonlyArray<Step> } = {
    yea: [
      { call: call("yea_ask", { service: "shop.example", capability: "shop.search", params: { tag: "vegan", max_cal: 700 } }), yea: lensForModel(veganAsk) },
      { call: call("yea_intent", { service: "shop.example", capability: "shop.order", params: { items: four, deliver: "2026-09-24" }, auto: true }), yea: lensForModel(ordered) }
    ],
    rest: [
      { call: call("search_menu", { tag: "vegan", max_cal: 700 }), min: min(restVegan), pretty: pretty(restVegan) },
      { call: call("create_order", { items: four, deliver: "2026-09-24" }), min: min(restOrder), pretty: pretty(restOrder) }
    ]
  }

  // Task 4: the full menu. Task 5: skim it (REST limit=30, YEA budget=800).
  const fullMenu = yield* sh.ask("shop.search", {}, { budget: 20000 })
  const rows = dataOf(fullMenu) as ReadonlyArray<unknown>
  if (rows.length !== MENU.length) throw new Error(`the full menu came back with ${rows.length} rows`)
  const skim = yield* sh.ask("shop.search", {}, { budget: 800 })
  const menuTask = {
    yea: [{ call: call("yea_ask", { service: "shop.example", capability: "shop.search", budget: 20000 }), yea: lensForModel(fullMenu) }],
    rest: [{ call: call("search_menu", {}), min: min(rows), pretty: pretty(rows) }]
  }
  const skimTask = {
    yea: [{ call: call("yea_ask", { service: "shop.example", capability: "shop.search", budget: 800 }), yea: lensForModel(skim) }],
    rest: [{ call: call("search_menu", { limit: 30 }), min: min(rows.slice(0, 30)), pretty: pretty(rows.slice(0, 30)) }]
  }

  return {
    rows,
    yeaDefs,
    restDefs,
    tasks: [
      { name: "Reschedule a meeting (REST: search -> free slots -> update)", text: "Move my 1:1 with Ana to the first free slot two days later.", yea: [yeaReschedule], rest: crud, inTotal: true },
      { name: "Reschedule a meeting (REST: one outcome-level endpoint)", text: "Move my 1:1 with Ana to the first free slot two days later.", yea: [yeaReschedule], rest: outcome, inTotal: false },
      { name: "Find vegan meals < 700 kcal and order four", text: "Find vegan meals under 700 kcal and order four of them for Thursday.", ...order, inTotal: true },
      { name: "Read the full 60-item menu", text: "Show me the whole menu.", ...menuTask, inTotal: true },
      { name: "Skim the menu (REST limit=30, YEA budget=800)", text: "Skim the menu for me.", ...skimTask, inTotal: true }
    ]
  }
})

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const data = await Effect.runPromise(
    run_.pipe(Effect.provide(Layer.merge(MemoryYea.layer, RandomBytes.seeded(new Uint8Array([42])))), Effect.withClock(fixedClock(NOW)))
  )
  const side = (steps: ReadonlyArray<Step>, which: "yea" | "min" | "pretty", defs: string): Side => ({ defs, steps: steps.map((s) => ({ call: s.call, result: s[which] ?? "" })) })
  for (const [label, count] of [["o200k_base (gpt-tokenizer)", o200k], ["SPEC section 8 estimate", estimate]] as const) {
    console.log(`\n-- ${label}`)
    console.log(`tool definitions every turn: REST ${count(data.restDefs)} (${REST_TOOLS.length} tools) vs YEA ${count(data.yeaDefs)} (${YEA_TOOLS.length} generic tools + 2 BRIEFs as Lens)`)
    console.log(["task".padEnd(60), "calls", "REST min", "REST pretty", "YEA", "YEA/min", "YEA/pretty", "results min->YEA"].join(" | "))
    const sum = { min: 0, pretty: 0, yea: 0 }
    for (const t of data.tasks) {
      const m = totalInput(count, t.text, side(t.rest, "min", data.restDefs))
      const p = totalInput(count, t.text, side(t.rest, "pretty", data.restDefs))
      const y = totalInput(count, t.text, side(t.yea, "yea", data.yeaDefs))
      if (t.inTotal) {
        sum.min += m.total
        sum.pretty += p.total
        sum.yea += y.total
      }
      console.log([t.name.padEnd(60), `${t.rest.length} -> ${t.yea.length}`.padEnd(5), String(m.total).padStart(8), String(p.total).padStart(11), String(y.total).padStart(5), (y.total / m.total).toFixed(3).padStart(7), (y.total / p.total).toFixed(3).padStart(10), `${m.results} -> ${y.results}`].join(" | "))
    }
    console.log(["All tasks (CRUD reschedule row)".padEnd(60), "     ", String(sum.min).padStart(8), String(sum.pretty).padStart(11), String(sum.yea).padStart(5), (sum.yea / sum.min).toFixed(3).padStart(7), (sum.yea / sum.pretty).toFixed(3).padStart(10)].join(" | "))
    if (count === o200k) (run as { last?: typeof sum }).last = sum
  }
  if (args.includes("--show")) {
    for (const t of data.tasks) {
      console.log(`\n-- what the YEA agent reads: ${t.name}`)
      for (const s of t.yea) console.log(`> ${s.call}\n${s.yea}`)
    }
  }
  // Where Lens could do better, from this run's own numbers.
  console.log("\n-- where Lens could do better")
  const t1 = data.tasks[1]
  const y1 = totalInput(o200k, t1.text, side(t1.yea, "yea", data.yeaDefs))
  const m1 = totalInput(o200k, t1.text, side(t1.rest, "min", data.restDefs))
  console.log(`- one-call reschedule: the receipt (${o200k(t1.yea[0].yea!)} tokens) is longer than the REST outcome's JSON (${o200k(t1.rest[0].min!)}); it carries the effects, undo window and receipt id, which the REST reply does not; total ${(y1.total / m1.total).toFixed(3)} of minified`)
  console.log(`- tool definitions: the BRIEFs are in context every turn (${o200k(data.yeaDefs)} tokens); a BRIEF trimmed to the capabilities a task needs would cut every turn's fixed cost`)
  const menuLens = data.tasks[3].yea[0].yea!
  const header = menuLens.split("\n")[0]
  console.log(`- the full menu as Lens (${o200k(menuLens)} tokens vs ${o200k(min(data.rows))} minified) is already a table (${header}); what is left is the names and digits themselves, so Lens has little more to take there`)
  const skimLens = data.tasks[4].yea[0].yea!
  console.log(`- budgets: the skim was fitted to 800 by the section 8 estimate (est ${est(skimLens)}), which o200k counts as ${o200k(skimLens)} (${(o200k(skimLens) / est(skimLens)).toFixed(2)}x); an estimate closer to real tokenizers would fit budgets more tightly`)
  const last = (run as { last?: { min: number; pretty: number; yea: number } }).last!
  const ratio = last.yea / last.min
  console.log(`\ntokens: YEA total input ${last.yea} = ${ratio.toFixed(3)} x minified JSON (${last.min}), ${(last.yea / last.pretty).toFixed(3)} x pretty; target <= ${TARGET.toFixed(3)}: ${ratio <= TARGET ? "met" : "NOT met"}`)
}
