// `npx tsx scripts/bench/_executor-profile.ts [--n N] [--concurrency C] [--top K]`: a CPU profile of
// the executor process (`writ serve`, SQLite, durable) through the count and total races of
// `npm run bench -- executor`, for what bounds them (docs/benchmarks.md, issue 30). The server runs
// with V8's profiler started by a preload (_cpu-profile-preload.mjs; NODE_OPTIONS refuses
// --cpu-prof), which writes the profile on SIGUSR2; its self time is summed per function and per
// area (Effect's runtime, src/, SQLite, GC, idle).
import { existsSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import { join } from "node:path"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { cpuOf, flag } from "./_limit.js"
import { call, key, postRaw, prefix, spawnServe, tempDir, writ, writeKeyFile } from "../../test/bind-writ-http/support.js"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const area = (url: string, fn: string): string => {
  if (fn === "(garbage collector)") return "GC"
  if (fn === "(idle)") return "idle"
  if (fn === "(program)") return "program"
  if (url.includes("/effect/") || url.includes("/@effect/")) return "effect"
  if (url.includes("better-sqlite3")) return "sqlite"
  if (url.includes("mandate-writ-http") || url.includes("/src/")) return "mandate"
  if (url.startsWith("node:") || url === "") return "node"
  return "other"
}

const args = process.argv.slice(2)
const N = flag(args, "n", 2000)
const C = flag(args, "concurrency", 64)
const TOP = flag(args, "top", 30)
const bytesOf = (o: JsonObject) => Buffer.from(encodeCanonical(o, "utf16"), "utf8")

const root = key(101)
const exec = key(102)
const dir = tempDir("profile-executor")
const profFile = join(dir, "executor.cpuprofile")
const wCount = writ(root, exec, { act: prefix("bench/"), uses: { t: "count", v: 1 } })
const T = 3 * Math.floor(N / 4) + 2
const wTotal = writ(root, exec, { act: prefix("bench/"), amount: { t: "total", v: T } })
const countCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wCount], "bench/book", { i })))
const totalCalls = Array.from({ length: N }, (_, i) => bytesOf(call(root, [wTotal], "bench/pay", { amount: 3, i })))
const server = await spawnServe(
  ["--port", "0", "--store", join(dir, "executor.db"), "--key", writeKeyFile(dir, exec), "--root", root.did],
  {
    WRIT_HANDLER_DELAY_MS: "0",
    NODE_OPTIONS: `--import ${join(import.meta.dirname, "_cpu-profile-preload.mjs")}`,
    MANDATE_CPU_PROFILE: profFile
  }
)
const agent = new Http.Agent({ keepAlive: true, maxSockets: C })
const target = new URL(server.url)
const race = async (bodies: ReadonlyArray<Buffer>, what: string) => {
  let next = 0
  const cpu0 = cpuOf(server.child.pid!)
  const t0 = performance.now()
  await Promise.all(Array.from({ length: C }, async () => {
    while (next < bodies.length) await postRaw(agent, target, bodies[next++])
  }))
  const secs = (performance.now() - t0) / 1000
  const cpu = cpuOf(server.child.pid!) - cpu0
  console.log(`${what}: ${(bodies.length / secs).toFixed(0)} calls/s, executor CPU ${((cpu / bodies.length) * 1e6).toFixed(0)} µs per call`)
}
await race(countCalls, "count race")
await race(totalCalls, "total race")
agent.destroy()
server.child.kill("SIGUSR2")
while (!existsSync(profFile)) await new Promise((r) => setTimeout(r, 100))
await new Promise((r) => setTimeout(r, 500))
await server.kill()
const file = profFile
const p = JSON.parse(readFileSync(file, "utf8")) as Profile
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const self = new Map<number, number>()
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
let total = 0
const fns = new Map<string, number>()
const areas = new Map<string, number>()
for (const [id, t] of self) {
  const f = byId.get(id)!.callFrame
  total += t
  const name = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\//, "")}:${f.lineNumber + 1}`
  fns.set(name, (fns.get(name) ?? 0) + t)
  const a = area(f.url, f.functionName)
  areas.set(a, (areas.get(a) ?? 0) + t)
}
const busy = total - (areas.get("idle") ?? 0)
const pct = (t: number) => `${((100 * t) / busy).toFixed(1)}%`
console.log(`profile ${file}: ${(busy / 1e6).toFixed(1)} s busy; by area (share of busy time):`)
for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1])) if (a !== "idle") console.log(`  ${a.padEnd(8)} ${pct(t)}`)
console.log(`top ${TOP} by self time:`)
for (const [n, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, TOP)) if (!n.startsWith("(idle)")) console.log(`  ${pct(t).padStart(6)} ${n}`)
