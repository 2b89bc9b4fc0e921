// `npm run bench -- NAME [flags]` runs scripts/bench/NAME.ts; with no name, every benchmark in turn
// (`console`: a million audit rows in the console, first page and first paint against count(*)).
// Each benchmark prints its figures beside a baseline measured in the same run, as a ratio,
// because these machines are noisy: absolute numbers are not comparable across runs. Each ends with
// a summary line `NAME: ...`; `npm run bench:readme` runs them all once and writes those lines,
// with the machine and its load (printed here), into the benchmark block of docs/benchmarks.md.
import { readdirSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here).filter((f) => f.endsWith(".ts") && f !== "main.ts" && !f.startsWith("_")).map((f) => f.slice(0, -3)).sort()
const [name, ...rest] = process.argv.slice(2)
// With no name, every benchmark with its defaults, and the executor once more as N workers on
// PostgreSQL, on a schema of its own.
const PG_WORKERS = ["--store", "postgres://postgres@127.0.0.1:5432/test#bench_all_workers", "--workers", "4", "--n", "400"]
const plan: Array<{ readonly b: string; readonly args: ReadonlyArray<string> }> = name === undefined
  ? available.flatMap((b) => b === "executor" ? [{ b, args: [] }, { b, args: PG_WORKERS }] : [{ b, args: [] }])
  : [{ b: name, args: rest }]
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ")
const cpu = cpus()
console.log(
  `machine: ${cpu.length} x ${cpu[0]?.model.trim() ?? "unknown cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ` +
    `${process.platform}; load average ${load()}; started ${new Date().toISOString()}`
)
for (const { b, args } of plan) {
  if (!available.includes(b)) {
    console.error(`unknown benchmark ${b}; available: ${available.join(", ") || "(none)"}`)
    process.exit(2)
  }
  const shown = name === undefined && args.length > 0 ? ` ${args.join(" ")}` : ""
  console.log(`== bench ${b}${shown}`)
  const t0 = performance.now()
  try {
    const mod = await import(pathToFileURL(join(here, `${b}.ts`)).href)
    await mod.run(args)
  } catch (e) {
    // One failed benchmark (a broken proof, a missing service) does not hide the others' figures.
    if (name !== undefined) throw e
    console.log(`${b}: FAILED (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
    process.exitCode = 1
  }
  console.log(`-- bench ${b}${shown}: ${((performance.now() - t0) / 1000).toFixed(0)} s; load average ${load()}`)
}
