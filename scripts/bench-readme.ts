// `npm run bench:readme [-- --from LOG]`: runs every benchmark once (`npm run bench`, no name), keeps
// the whole output in scripts/bench/results/last-run.txt, and rewrites docs/benchmarks.md's block between
// `<!-- bench:begin -->` and `<!-- bench:end -->` with the machine, its load, and every summary
// line (`NAME: ...`, each benchmark's last line) of that one run, so the figures the docs show
// always come from one run on one stated machine. `--from LOG` rebuilds the block from a saved log.
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const logFile = join(root, "scripts", "bench", "results", "last-run.txt")
const page = join(root, "docs", "benchmarks.md")
const BEGIN = "<!-- bench:begin -->"
const END = "<!-- bench:end -->"

const runAll = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts", "bench", "main.ts")], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8")
      process.stdout.write(d)
    })
    child.on("error", reject)
    // A failed benchmark is reported in the log as `NAME: FAILED (...)`; the block shows it.
    child.on("close", () => resolve(out))
  })

interface Section {
  readonly name: string
  readonly seconds: string
  readonly summaries: ReadonlyArray<string>
}

/** Splits a run's output into benchmarks, keeping each one's `NAME...: ` summary lines. */
export const parseRun = (log: string): { machine: string; sections: Array<Section>; endLoad: string } => {
  const lines = log.split("\n")
  const machine = lines.find((l) => l.startsWith("machine: "))?.slice(9) ?? "unknown machine"
  const sections: Array<Section> = []
  let current: { name: string; args: string; lines: Array<string> } | undefined
  let endLoad = ""
  for (const line of lines) {
    const start = /^== bench (\S+)( .*)?$/.exec(line)
    if (start !== null) {
      current = { name: start[1], args: start[2]?.trim() ?? "", lines: [] }
      continue
    }
    const end = /^-- bench (\S+)(?: .*)?: (\d+) s; load average (.*)$/.exec(line)
    if (end !== null && current !== undefined) {
      const prefix = current.name
      const summaries = current.lines.filter((l) => l.startsWith(`${prefix}: `) || l.startsWith(`${prefix}-`) && /^[a-z-]+: /.test(l))
      sections.push({ name: current.args === "" ? current.name : `${current.name} ${current.args}`, seconds: end[2], summaries })
      endLoad = end[3]
      current = undefined
      continue
    }
    current?.lines.push(line.trim())
  }
  return { machine, sections, endLoad }
}

const escapeCell = (s: string) => s.replace(/\|/g, "\\|")

export const block = (log: string): string => {
  const { machine, sections, endLoad } = parseRun(log)
  const rows = sections.map((s) =>
    `| \`${s.name}\` | ${s.seconds} s | ${s.summaries.length === 0 ? "(no summary line)" : s.summaries.map((l) => `\`${escapeCell(l)}\``).join("<br>")} |`
  )
  return [
    BEGIN,
    `One run of every benchmark (\`npm run bench\` with no name, as \`npm run bench:readme\` runs it: each in turn, in one process), on: ${machine}; load average at the end ${endLoad}.`,
    `The whole output is in [scripts/bench/results/last-run.txt](../scripts/bench/results/last-run.txt).`,
    "",
    "| bench | took | summary (its last line) |",
    "|---|---|---|",
    ...rows,
    END
  ].join("\n")
}

const main = async () => {
  const fromAt = process.argv.indexOf("--from")
  const log = fromAt >= 0 ? readFileSync(process.argv[fromAt + 1], "utf8") : await runAll()
  if (fromAt < 0) {
    mkdirSync(dirname(logFile), { recursive: true })
    writeFileSync(logFile, log)
  }
  const text = readFileSync(page, "utf8")
  const b = text.indexOf(BEGIN)
  const e = text.indexOf(END)
  if (b < 0 || e < b) throw new Error(`docs/benchmarks.md has no ${BEGIN} ... ${END} block`)
  writeFileSync(page, text.slice(0, b) + block(log) + text.slice(e + END.length))
  console.log(`docs/benchmarks.md: benchmark block rewritten from ${fromAt >= 0 ? process.argv[fromAt + 1] : "this run"}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
