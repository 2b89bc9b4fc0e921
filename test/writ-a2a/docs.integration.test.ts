// docs/a2a.md is a runnable example: every ```sh block, in order, in one shell, in an empty temp
// folder, with `mandate` on PATH (the CLI the run's global setup bundled, else the sources through
// tsx). Run as a child process, asynchronously, so the worker stays free. The server it starts in the background is killed by its last block; the test checks what
// the blocks print and that nothing is left listening.
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { cliEntry } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"

describe("docs/a2a.md", () => {
  it("runs every shell block as written", async () => {
    const doc = readFileSync(join(repoRoot, "docs/a2a.md"), "utf8")
    const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
    expect(blocks.length).toBeGreaterThan(3)
    const dir = mkdtempSync(join(tmpdir(), "mandate-a2a-doc-"))
    const bin = join(dir, "bin")
    mkdirSync(bin)
    // tsx is resolved from the repository, not from the empty folder the blocks run in.
    const entry = cliEntry.map((a) => (a === "tsx" ? pathToFileURL(join(repoRoot, "node_modules/tsx/dist/esm/index.mjs")).href : a))
    writeFileSync(join(bin, "mandate"), `#!/bin/sh\nexec "${process.execPath}" ${entry.map((a) => `"${a}"`).join(" ")} "$@"\n`)
    chmodSync(join(bin, "mandate"), 0o755)
    const work = join(dir, "work")
    mkdirSync(work)
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      // Should a block fail, the server started in the background is stopped all the same.
      const script = `trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; true' EXIT\n${blocks.join("\n")}`
      const child = spawn("bash", ["-e", "-c", script], {
        cwd: work,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      child.on("close", (status) => resolve({ status, stdout, stderr }))
    })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/A2A 1\.0 at http:\/\/127\.0\.0\.1:\d+\/a2a\ntask \S+ TASK_STATE_COMPLETED\ntally ok\n/)
    expect(r.stdout).toMatch(/A2A 0\.3 at http:\/\/127\.0\.0\.1:\d+\/a2a\ntask \S+ TASK_STATE_COMPLETED\n/)
    expect(r.stdout).toContain("tree: valid (section 6.2)")
    expect(r.stdout).toMatch(/task writ-revoke TASK_STATE_CANCELED\nack from did:key:\S+: valid/)
    expect(r.stdout).toContain("tally failed (revoked), a signed refusal")
    expect(r.stdout.match(/verdict: valid/g)?.length).toBe(3)
  }, 300_000)
})
