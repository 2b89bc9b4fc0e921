// `npm run bench -- NAME [flags]` runs scripts/bench/NAME.ts; with no name, every benchmark in turn
// (`console`: a million audit rows in the console, first page and first paint against count(*)).
// Each benchmark prints its figures beside a baseline measured in the same run, as a ratio,
// because these machines are noisy: absolute numbers are not comparable across runs.
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here).filter((f) => f.endsWith(".ts") && f !== "main.ts" && !f.startsWith("_")).map((f) => f.slice(0, -3)).sort()
const [name, ...rest] = process.argv.slice(2)
const chosen = name === undefined ? available : [name]
for (const b of chosen) {
  if (!available.includes(b)) {
    console.error(`unknown benchmark ${b}; available: ${available.join(", ") || "(none)"}`)
    process.exit(2)
  }
  console.log(`== bench ${b}`)
  const mod = await import(pathToFileURL(join(here, `${b}.ts`)).href)
  await mod.run(rest)
}
