// `npm run bench -- lens`: the token estimate (SPEC §8) of the 60-item menu of design.md as Lens,
// as minified JSON and as pretty JSON, measured in the same run and shown as ratios to minified
// JSON (the baseline a REST API would send). Also the estimate of a budget-fitted ANSWER.
import { fitReply } from "../../src/yea/lens/budget.js"
import { est } from "../../src/yea/lens/estimate.js"
import { lensReply } from "../../src/yea/lens/reply.js"
import { lensValue } from "../../src/yea/lens/value.js"

const DISHES = [
  "Falafel Plate", "Tofu Pad Thai", "Chicken Shawarma", "Lentil Soup", "Beef Burrito", "Veggie Burger",
  "Salmon Poke", "Margherita Pizza", "Paneer Tikka", "Caesar Salad", "Ramen Bowl", "Fish Tacos",
  "Mushroom Risotto", "Pulled Pork Sandwich", "Greek Gyro"
]
const STYLES = ["", "Spicy ", "Large ", "Classic "]

/** The menu, built deterministically: 60 items of {sku, name, usd, cal, protein}. */
export const menu = (): ReadonlyArray<{ sku: string; name: string; usd: number; cal: number; protein: number }> =>
  Array.from({ length: 60 }, (_, i) => ({
    sku: `m${String(i + 1).padStart(3, "0")}`,
    name: `${STYLES[Math.floor(i / DISHES.length)]}${DISHES[i % DISHES.length]}`,
    usd: (899 + ((i * 737) % 1500)) / 100,
    cal: 320 + ((i * 53) % 600),
    protein: 8 + ((i * 17) % 45)
  }))

const row = (label: string, tokens: number, base: number, bytes: number): string =>
  `${label.padEnd(16)} ${String(tokens).padStart(6)} tokens  ${(tokens / base).toFixed(3).padStart(6)}x minified  ${String(bytes).padStart(6)} bytes`

export const run = async (_args: ReadonlyArray<string>): Promise<void> => {
  const items = menu()
  const lens = lensValue(items)
  const minified = JSON.stringify(items)
  const pretty = JSON.stringify(items, null, 2)
  const base = est(minified)
  console.log(`60-item menu {sku, name, usd, cal, protein}; est = SPEC §8 token estimate`)
  console.log(row("Lens", est(lens), base, Buffer.byteLength(lens)))
  console.log(row("minified JSON", base, base, Buffer.byteLength(minified)))
  console.log(row("pretty JSON", est(pretty), base, Buffer.byteLength(pretty)))
  console.log(`Lens saves ${((1 - est(lens) / base) * 100).toFixed(1)}% against minified JSON, ${((1 - est(lens) / est(pretty)) * 100).toFixed(1)}% against pretty JSON`)
  let n = 0
  for (const budget of [250, 800]) {
    const fitted = fitReply({ kind: "ANSWER", data: items }, budget, () => `h_bench${String(n++).padStart(5, "0")}`)
    const out = lensReply(fitted.reply)
    console.log(`ANSWER fitted to budget ${budget}: est ${est(out)} (${out.split("\n").length} lines; last: ${out.split("\n").pop()})`)
  }
  console.log(`lens: ${est(lens)} estimated tokens = ${(est(lens) / base).toFixed(3)} x minified JSON (${base}), ${(est(lens) / est(pretty)).toFixed(3)} x pretty`)
}
