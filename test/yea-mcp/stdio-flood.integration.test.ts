// `mandate yea mcp-example` as a client's child process (its stdio is the transport): a 20 MB
// line gets a JSON-RPC error and the process goes on answering; before the bounded transport
// it exited without a word. The home is a temp folder.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cliEntry } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"
import { keyFileOf, serverSeed } from "./harness.js"

describe("mcp-example on stdio under a 20 MB line", () => {
  it.live("answers with -32600, says so on stderr, and answers the next request", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const home = mkdtempSync(join(tmpdir(), "yea-flood-home-"))
        return spawn(process.execPath, [...cliEntry, "yea", "mcp-example", "--server-key", keyFileOf(serverSeed)], { cwd: repoRoot, env: { ...process.env, HOME: home, YEA_HOME: join(home, ".yea") }, stdio: ["pipe", "pipe", "pipe"] })
      }),
      (child) =>
        Effect.promise(
          () =>
            new Promise<void>((resolve, reject) => {
              let out = ""
              let err = ""
              child.stderr!.on("data", (c: Buffer) => { err += c.toString() })
              child.on("exit", (code) => reject(new Error(`the server exited (${code}): ${err}`)))
              child.stdout!.on("data", (c: Buffer) => {
                out += c.toString()
                const lines = out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number } ; result?: { tools?: Array<unknown> } })
                if (lines.some((l) => l.id === 1) && !out.includes('"id":2') && !sent) send()
                const listed = lines.find((l) => l.id === 2)
                if (listed !== undefined) {
                  expect(lines.find((l) => l.id === null)?.error?.code).toBe(-32600)
                  expect(listed.result?.tools?.length).toBeGreaterThan(0)
                  expect(err).toContain("discarded; the session goes on")
                  child.removeAllListeners("exit")
                  resolve()
                }
              })
              let sent = false
              const send = () => {
                sent = true
                child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
                const mib = Buffer.alloc(1024 * 1024, 0x61)
                for (let i = 0; i < 20; i++) child.stdin!.write(mib)
                child.stdin!.write("\n" + JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n")
              }
              child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) + "\n")
            })
        ),
      (child) => Effect.sync(() => child.kill())
    ), { timeout: 120_000 })
})
