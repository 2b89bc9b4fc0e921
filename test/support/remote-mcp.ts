// Shared by the tests of the MCP commands served over Streamable HTTP (`--listen`, `--keys`;
// src/bind/mcp/remote.ts): a command started as a real process and waited on until it says where
// it listens, a keys file, the official SDK client with or without a bearer key, and the
// listener's refusals as a raw HTTP client sees them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { keyHash } from "../../src/bind/mcp/remote.js"
import { cliEntry } from "./cli.js"
import { repoRoot } from "./shared.js"

export const BEARER = "remote-0123456789abcdef0123456789abcdef"

/** A keys file holding the SHA-256 of `BEARER` (what an operator keeps at rest). */
export const keysFile = (): string => {
  const p = join(mkdtempSync(join(tmpdir(), "mcp-keys-")), "keys")
  writeFileSync(p, `# the test client\n${keyHash(BEARER)}\n`)
  return p
}

/** `mandate ...args` as a process, until its stderr matches `ready` (group 1: the URL); killed
 * with the scope. A process that exits first fails with what it said. */
export const startListening = (args: ReadonlyArray<string>, env: Record<string, string> = {}, ready = /(?:listening on|serving MCP at) (http:\/\/\S+\/mcp)/) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly stderr: () => string; readonly kill: () => void }, Error>((resume) => {
      const child = spawn(process.execPath, [...cliEntry, ...args], {
        cwd: repoRoot,
        env: { ...process.env, NO_COLOR: "1", ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let err = ""
      let done = false
      child.stderr.on("data", (c: Buffer) => {
        err += c.toString()
        const m = ready.exec(err)
        if (m !== null && !done) {
          done = true
          resume(Effect.succeed({ url: m[1], stderr: () => err, kill: () => void child.kill() }))
        }
      })
      child.on("exit", (code) => {
        if (!done) {
          done = true
          resume(Effect.fail(new Error(`exited ${String(code)} before listening: ${err}`)))
        }
      })
    }),
    (p) => Effect.sync(() => p.kill())
  )

/** The official SDK client over Streamable HTTP, with `key` as its bearer key; closed with the scope. */
export const httpClient = (url: string, key: string | undefined, capabilities: Record<string, unknown> = {}) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const transport = new StreamableHTTPClientTransport(new URL(url), key === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${key}` } } })
      const client = new Client({ name: "remote-test", version: "1" }, { capabilities })
      yield* Effect.tryPromise(() => client.connect(transport, { timeout: 60_000 }))
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close().catch(() => undefined))
  )

export const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(() => fetch(url, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }))

export const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })

/** What every listener must refuse, and what it must publish: the SDK client without a key and
 * with a wrong one fails to connect; a raw initialize without a key is 401 with the challenge
 * naming the protected resource metadata (RFC 9728), which is served and names this endpoint; a
 * body over the 1 MiB cap is 413. */
export const refusals = (url: string) =>
  Effect.gen(function*() {
    expect((yield* Effect.exit(httpClient(url, undefined)))._tag).toBe("Failure")
    expect((yield* Effect.exit(httpClient(url, `${BEARER}-wrong`)))._tag).toBe("Failure")
    const res = yield* post(url, INITIALIZE)
    expect(res.status).toBe(401)
    const m = /^Bearer resource_metadata="([^"]+)"$/.exec(res.headers.get("www-authenticate") ?? "")
    expect(m).not.toBeNull()
    const meta = yield* Effect.promise(() => fetch(m![1]).then((r) => r.json() as Promise<{ resource: string; bearer_methods_supported: Array<string> }>))
    expect(meta.resource).toBe(url)
    expect(meta.bearer_methods_supported).toEqual(["header"])
    const big = yield* post(url, JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) }), { authorization: `Bearer ${BEARER}` })
    expect(big.status).toBe(413)
  })
