// A handler module Node cannot run as it is: a TypeScript file given to the built bin fails on
// plain Node with ERR_UNKNOWN_FILE_EXTENSION, which `writ serve` and `writ files run` say as
// `mandate/bad_handler` with what to do (build it to JavaScript, or run under a loader). The error
// is Node's own, from a plain node process with no loader (this test runner loads TypeScript
// itself, so the import cannot fail here in process).
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { handlerLoadFailure } from "../../src/app/inputs.js"

/** What a plain node process's dynamic import of `file` fails with: `{ code, message }`. */
const nodeImportError = (file: string): { code: string; message: string } => {
  const script = `try { await import(${JSON.stringify(pathToFileURL(file).href)}); console.log("{}") } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } })
  return JSON.parse(r.stdout) as { code: string; message: string }
}

const asError = (e: { code: string; message: string }) => Object.assign(new Error(e.message), { code: e.code })

describe("a handler module Node cannot load", () => {
  it("a TypeScript handler on plain Node: mandate/bad_handler naming the loader it needs", () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-handler-"))
    try {
      const ts = join(dir, "pay.ts")
      writeFileSync(ts, "export const application: { perform: () => number } = { perform: () => 1 }\n")
      const e = nodeImportError(ts)
      // Node without type stripping (Node 20, the version this package's engines start at).
      expect(e.code).toBe("ERR_UNKNOWN_FILE_EXTENSION")
      const failure = handlerLoadFailure(ts, asError(e))
      expect(failure.code).toBe("mandate/bad_handler")
      expect(failure.message).toBe(`${ts}: a TypeScript handler needs a loader: build it to JavaScript (as dist/examples/payment.js is built), or run mandate under node --import tsx`)
      // Any other failure keeps Node's own words.
      const broken = join(dir, "broken.mjs")
      writeFileSync(broken, "export const = 1\n")
      const other = handlerLoadFailure(broken, asError(nodeImportError(broken)))
      expect(other.code).toBe("mandate/bad_handler")
      expect(other.message).toMatch(/broken\.mjs: Error: Unexpected token/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
