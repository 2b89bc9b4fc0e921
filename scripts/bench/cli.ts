// `npm run bench -- cli [--rounds=N]`: how fast the `mandate` bin starts, as a user runs it
// (scripts/mandate.mjs -> the bundled dist/bin/main.js, no TypeScript loader), against bare
// `node -e 0` measured in the same run, rounds interleaved so that load on the machine falls on
// every command alike. Wall time is the median over the rounds; memory is the largest peak
// resident set (from /usr/bin/time) over the rounds.
//
//   help    `mandate --help`: the command tree with every command a stub, no command module
//   verify  `mandate writ verify FILE` on a writ from the conformance corpus: the Writ verifier
//           and @effect/platform's FileSystem, nothing of YEA, the executor, stores or transports
//   effect  `import("effect")` alone, as the library's users load it (hundreds of modules): what
//           bounds the start of anything that imports Effect unbundled, for comparison
//
// Targets (issue 15): help and verify at most 4x node's wall time and under 120 MB.
// The last line is `cli: help R verify R (x node)`.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { isStale } from "../built.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const TIME = "/usr/bin/time"
const MAX_RATIO = 4
const MAX_MB = 120

interface Sample { readonly ms: number; readonly mb: number | undefined }

const measure = (args: ReadonlyArray<string>, scratch: string): Sample => {
  const memFile = join(scratch, "mem")
  const withTime = existsSync(TIME)
  const [cmd, argv] = withTime ? [TIME, ["-f", "%M", "-o", memFile, process.execPath, ...args]] : [process.execPath, [...args]]
  const t0 = performance.now()
  const r = spawnSync(cmd, argv, { cwd: scratch, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  const mb = withTime ? Number(readFileSync(memFile, "utf8").trim().split("\n").pop()) / 1024 : undefined
  return { ms, mb }
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export const run = async (argv: ReadonlyArray<string>): Promise<void> => {
  const rounds = Number(argv.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? 7)
  if (isStale(root)) {
    console.log("dist/ is missing or older than the sources: npm run build")
    const b = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" })
    if (b.status !== 0) throw new Error("npm run build failed")
  }
  const scratch = mkdtempSync(join(tmpdir(), "mandate-bench-cli-"))
  try {
    const vector = JSON.parse(readFileSync(join(root, "conformance", "vectors", "verify_writ.child_writ.json"), "utf8")) as { input: { writ: { exp: number } } }
    writeFileSync(join(scratch, "w.json"), JSON.stringify(vector.input.writ))
    const bin = join(root, "scripts", "mandate.mjs")
    const commands: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["node", ["-e", "0"]],
      ["help", [bin, "--help"]],
      ["verify", [bin, "writ", "verify", "w.json", "--now", String(vector.input.writ.exp - 3600)]],
      ["effect", ["--input-type=module", "-e", `await import(${JSON.stringify(join(root, "node_modules", "effect", "dist", "esm", "index.js"))})`]]
    ]
    const samples = new Map<string, Array<Sample>>(commands.map(([n]) => [n, []]))
    for (const [, args] of commands) measure(args, scratch) // warm the file cache once
    for (let i = 0; i < rounds; i++) for (const [n, args] of commands) samples.get(n)!.push(measure(args, scratch))
    const wall = (n: string) => median(samples.get(n)!.map((s) => s.ms))
    const peak = (n: string) => Math.max(...samples.get(n)!.map((s) => s.mb ?? Number.NaN))
    const base = wall("node")
    const ratio = (n: string) => wall(n) / base
    const label: Record<string, string> = { node: "node -e 0", help: "mandate --help", verify: "mandate writ verify FILE", effect: 'import("effect") alone' }
    console.log(`${rounds} rounds, interleaved; wall = median, memory = largest peak RSS`)
    for (const [n] of commands) {
      const mb = peak(n)
      console.log(`  ${label[n].padEnd(26)} ${wall(n).toFixed(0).padStart(6)} ms  ${Number.isNaN(mb) ? "   n/a" : `${mb.toFixed(0).padStart(4)} MB`}  ${n === "node" ? "(baseline)" : `${ratio(n).toFixed(2)}x node`}`)
    }
    for (const n of ["help", "verify"]) {
      const ok = ratio(n) <= MAX_RATIO && !(peak(n) >= MAX_MB)
      console.log(`  target ${n}: <= ${MAX_RATIO}x node and < ${MAX_MB} MB: ${ok ? "met" : "NOT met"}`)
    }
    console.log(`cli: help ${ratio("help").toFixed(2)} verify ${ratio("verify").toFixed(2)} (x node)`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
