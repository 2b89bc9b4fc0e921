// The example shop (docs/bench-RESULTS.md "Find vegan meals", "Read the full 60-item menu"): a
// 60-item menu to search, and orders that report what they spend in `uses` (conventions.md `spend`,
// USD at scale 2), undoable for two hours. Two delivery options make two proposals, so Lens shows
// shared attributes once. An order's world is a Ref made per service, of a persistent HashMap: an
// order is one O(log n) insert, where copying a Map per order made n orders cost O(n²).
import { Effect, HashMap, Ref } from "effect"
import { yeaError } from "../yea/reason.js"
import { ask, intent, plans, type ServiceSpec } from "../yea/service/define.js"

export const SHOP_ID = "shop.example"

export interface MenuItem {
  readonly sku: string
  readonly name: string
  readonly usd: number
  readonly cal: number
  readonly protein: number
  readonly tags: ReadonlyArray<string>
}

const BASES = ["Tofu Pad Thai", "Chicken Shawarma", "Lentil Curry", "Salmon Bowl", "Falafel Wrap", "Beef Chili",
  "Mushroom Risotto", "Tempeh Stir-Fry", "Turkey Meatballs", "Chickpea Salad"] as const
const STYLES = ["Classic", "Spicy", "Light", "Hearty", "Herb", "Smoky"] as const
const VEGAN = new Set(["Tofu Pad Thai", "Lentil Curry", "Falafel Wrap", "Tempeh Stir-Fry", "Chickpea Salad"])

/** 60 items, deterministic: 10 dishes × 6 styles. */
export const MENU: ReadonlyArray<MenuItem> = STYLES.flatMap((style, s) =>
  BASES.map((base, b) => {
    const i = s * BASES.length + b
    const tags = [...(VEGAN.has(base) ? ["vegan", "vegetarian"] : []), ...(style === "Spicy" ? ["spicy"] : []), ...((b + s) % 3 === 0 ? ["high-protein"] : [])]
    return { sku: `m${String(i + 1).padStart(2, "0")}`, name: `${style} ${base}`, usd: (949 + ((i * 37) % 700)) / 100, cal: 420 + ((i * 53) % 480), protein: 12 + ((i * 7) % 30), tags }
  })
)

const cents = (usd: number) => Math.round(usd * 100)
const money = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")} USD`

export const shopService = (trust: ReadonlyArray<string>) =>
  Effect.map(Ref.make(HashMap.empty<string, { readonly status: string }>()), (orders): ServiceSpec => ({
    id: SHOP_ID,
    name: "Example Meals",
    summary: "Chef-made meal delivery.",
    trust,
    capabilities: {
      "shop.search": ask({
        summary: "Search the menu",
        params: { "query?": "string", "tag?": "high-protein|spicy|vegetarian|vegan", "max_cal?": "int" },
        run: ({ params }) =>
          Effect.succeed(
            MENU.filter(
              (m) =>
                (params.tag === undefined || m.tags.includes(String(params.tag))) &&
                (params.max_cal === undefined || m.cal <= Number(params.max_cal)) &&
                (params.query === undefined || m.name.toLowerCase().includes(String(params.query).toLowerCase()))
            ).map(({ tags: _, ...row }) => row)
          )
      }),
      "shop.order": intent({
        summary: "Order meals for delivery",
        params: { items: [{ sku: "string", qty: "int" }], deliver: "date" },
        risk: "low",
        plan: ({ params }) =>
          Effect.gen(function* () {
            const items = params.items as ReadonlyArray<{ sku: string; qty: number }>
            if (items.length === 0) return yield* Effect.fail(yeaError("invalid_params", "order at least one item"))
            let subtotal = 0
            const lines: Array<string> = []
            for (const it of items) {
              const m = MENU.find((x) => x.sku === it.sku)
              if (m === undefined) return yield* Effect.fail(yeaError("invalid_params", `no menu item ${it.sku}`, { fix: [{ say: "search the menu with shop.search" }] }))
              if (it.qty < 1 || it.qty > 20) return yield* Effect.fail(yeaError("invalid_params", "qty is 1 to 20"))
              subtotal += cents(m.usd) * it.qty
              lines.push(`${it.qty}× ${m.name}`)
            }
            const option = (label: string, fee: number) => {
              const total = subtotal + fee
              return {
                summary: `${lines.length} item${lines.length === 1 ? "" : "s"} for ${String(params.deliver)}, ${label} — ${money(total)}`,
                effects: [
                  { op: "create" as const, target: "order", detail: lines.join(", ") },
                  { op: "create" as const, target: "charge", detail: `${money(total)} to card ••4242` }
                ],
                uses: { spend: { amount: total, scale: 2, unit: "USD" } },
                undoWindow: 7200,
                data: { subtotal: subtotal / 100, delivery: fee / 100 },
                action: { items, deliver: params.deliver, total }
              }
            }
            return plans(option("standard", 599), option("express", 1299))
          }),
        commit: (action, ctx) =>
          Effect.gen(function* () {
            yield* ctx.progress("authorizing card", 0.3)
            const id = `o_${ctx.proposal.slice(2, 8)}`
            yield* Ref.update(orders, HashMap.set(id, { status: "placed" }))
            return { order: id, total: money((action as { total: number }).total) }
          }),
        undo: (_action, result) =>
          Effect.gen(function* () {
            const id = (result as { order: string }).order
            yield* Ref.update(orders, HashMap.set(id, { status: "cancelled" }))
            return { order: id, refunded: true }
          })
      })
    }
  }))
