// `mandate demo --ledger` run once per test run, and what it left shared by the tests that only
// read it (test/demo, test/ledger/demos.test.ts, test/console): its exit status and output, the
// transcript, the folder of every object exchanged with both stores and audit records, and the
// ledger of its decisions. The first test to ask runs it; a test in another worker that asks
// meanwhile waits for that run's result instead of starting its own. The folder is the run's own
// (demo-setup.ts, the e2e project's global setup); outside that project, each worker runs the demo
// once for itself. Tests copy what they change (the ledger) and never write into the shared folder.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { type Ran, runMandate } from "./cli.js"

export interface DemoRun extends Ran {
  /** The demo's `--out` folder: every object exchanged, the key files, b.sqlite, c.sqlite, the audit records. */
  readonly out: string
  /** The SQLite ledger the demo recorded its protocol decisions in (`--ledger`). */
  readonly ledger: string
  /** out/transcript.txt, or "" when the demo wrote none. */
  readonly transcript: string
}

/** How long a waiting test waits for the run another worker started, and the run itself may take. */
const RUN_TIMEOUT_MS = 300_000

const provided = (inject as (key: string) => string | undefined)("mandateDemoRun")
let local: Promise<DemoRun> | undefined

const runInto = async (dir: string): Promise<DemoRun> => {
  const out = join(dir, "out")
  const ledger = join(dir, "ledger.db")
  // Printed once per run where the run is shared: a second line would mean the demo ran twice.
  console.log(`[demo] mandate demo --out ${out} --ledger ${ledger}: the run this test run shares`)
  const r = await runMandate(["demo", "--out", out, "--ledger", ledger], RUN_TIMEOUT_MS, "SIGINT")
  const transcript = existsSync(join(out, "transcript.txt")) ? readFileSync(join(out, "transcript.txt"), "utf8") : ""
  return { ...r, out, ledger, transcript }
}

const waitFor = async (file: string): Promise<DemoRun> => {
  for (let waited = 0; waited < RUN_TIMEOUT_MS + 60_000; waited += 250) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as DemoRun
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`the shared demo run never wrote ${file}`)
}

/** The demo's one run in this test run: started by the first caller, awaited by the others. */
export const sharedDemo = (): Promise<DemoRun> => {
  if (local !== undefined) return local
  if (provided === undefined) {
    local = runInto(mkdtempSync(join(tmpdir(), "mandate-demo-")))
    return local
  }
  const result = join(provided, "result.json")
  try {
    // Whoever makes this folder runs the demo; everyone else waits for its result.
    mkdirSync(join(provided, "started"))
  } catch {
    local = waitFor(result)
    return local
  }
  local = runInto(join(provided, "started")).then((run) => {
    writeFileSync(`${result}.tmp`, JSON.stringify(run))
    renameSync(`${result}.tmp`, result)
    return run
  })
  return local
}
