// `npm run bench -- cli [--rounds=N]`: how fast the `mandate` bin starts, as a user runs it
// (scripts/mandate.mjs -> the bundled dist/bin/main.js, no TypeScript loader), against bare
// `node -e 0` measured in the same run, rounds interleaved so that load on the machine falls on
// every command alike. Wall time is the median over the rounds; memory is the largest peak
// resident set (from /usr/bin/time) over the rounds; CPU (user + system, from /usr/bin/time too)
// is shown beside it because on a busy machine it varies far less than wall time.
//
//   help    `mandate --help`: the command tree with every command a stub, no command module
//   verify  `mandate writ verify FILE` on a writ from the conformance corpus: the Writ verifier
//           and @effect/platform's FileSystem, nothing of YEA, the executor, stores or transports
//   floor   an empty @effect/cli command run by NodeRuntime, bundled exactly as the bin is: what
//           any command line on Effect, @effect/cli and @effect/platform-node pays before doing
//           anything (the bound on `help`; `verify` adds the Writ verifier and the file read)
//   effect  `import("effect")` alone, unbundled, as the library's users load it: for comparison
//
// Targets: help and verify at most 4x node's wall time and under 120 MB.
// The last line is `cli: help R verify R (x node)`.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { isStale } from "../built.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const TIME = "/usr/bin/time"
const MAX_RATIO = 4
const MAX_MB = 120

interface Sample { readonly ms: number; readonly mb: number | undefined; readonly cpu: number | undefined }

const measure = (args: ReadonlyArray<string>, scratch: string): Sample => {
  const memFile = join(scratch, "mem")
  const withTime = existsSync(TIME)
  const [cmd, argv] = withTime ? [TIME, ["-f", "%M %U %S", "-o", memFile, process.execPath, ...args]] : [process.execPath, [...args]]
  const t0 = performance.now()
  const r = spawnSync(cmd, argv, { cwd: scratch, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  if (!withTime) return { ms, mb: undefined, cpu: undefined }
  const [kb, user, sys] = readFileSync(memFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number)
  return { ms, mb: kb / 1024, cpu: (user + sys) * 1000 }
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
    writeFileSync(join(scratch, "floor.ts"), [
      `import * as Command from "@effect/cli/Command"`,
      `import * as NodeContext from "@effect/platform-node/NodeContext"`,
      `import * as NodeRuntime from "@effect/platform-node/NodeRuntime"`,
      `import { Effect } from "effect"`,
      `Command.run(Command.make("floor"), { name: "floor", version: "0" })(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)`
    ].join("\n"))
    await build({
      entryPoints: [join(scratch, "floor.ts")], outfile: join(scratch, "floor.mjs"), bundle: true, format: "esm", platform: "node",
      target: "node20", minify: true, nodePaths: [join(root, "node_modules")], logLevel: "warning",
      banner: { js: "import{createRequire as __r}from\"node:module\";const require=__r(import.meta.url);" }
    })
    const commands: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["node", ["-e", "0"]],
      ["help", [bin, "--help"]],
      ["verify", [bin, "writ", "verify", "w.json", "--now", String(vector.input.writ.exp - 3600)]],
      ["floor", [join(scratch, "floor.mjs")]],
      ["effect", ["--input-type=module", "-e", `await import(${JSON.stringify(join(root, "node_modules", "effect", "dist", "esm", "index.js"))})`]]
    ]
    const samples = new Map<string, Array<Sample>>(commands.map(([n]) => [n, []]))
    for (const [, args] of commands) measure(args, scratch) // warm the file cache once
    for (let i = 0; i < rounds; i++) for (const [n, args] of commands) samples.get(n)!.push(measure(args, scratch))
    const wall = (n: string) => median(samples.get(n)!.map((s) => s.ms))
    const cpu = (n: string) => median(samples.get(n)!.map((s) => s.cpu ?? Number.NaN))
    const peak = (n: string) => Math.max(...samples.get(n)!.map((s) => s.mb ?? Number.NaN))
    const base = wall("node")
    const ratio = (n: string) => wall(n) / base
    const label: Record<string, string> = { node: "node -e 0", help: "mandate --help", verify: "mandate writ verify FILE", floor: "empty @effect/cli command", effect: 'import("effect") alone' }
    console.log(`${rounds} rounds, interleaved; wall and CPU = median, memory = largest peak RSS`)
    for (const [n] of commands) {
      const mb = peak(n)
      console.log(`  ${label[n].padEnd(26)} ${wall(n).toFixed(0).padStart(6)} ms  ${Number.isNaN(mb) ? "   n/a" : `${mb.toFixed(0).padStart(4)} MB`}  cpu ${cpu(n).toFixed(0).padStart(5)} ms  ${n === "node" ? "(baseline)" : `${ratio(n).toFixed(2)}x node (cpu ${(cpu(n) / cpu("node")).toFixed(2)}x)`}`)
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
