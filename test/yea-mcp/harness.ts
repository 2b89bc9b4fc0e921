// Drives the example job server (`mandate yea mcp-example`, a child process) with the SDK's own
// `Client`, over stdio or Streamable HTTP on 127.0.0.1, with an optional form handler (a client
// that can elicit) and the approval store in a SQLite file that the test also opens, as
// `mandate yea approve` would, to approve a consent code.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { approveJobCode } from "../../src/yea/approval/index.js"
import { fixedClock } from "../../src/yea/conformance.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { approvalLayer } from "../../src/store/sqlite/approval.js"
import { SqliteStore } from "../../src/store/sqlite/client.js"
import { repoRoot } from "../support/shared.js"
import { cliEntry } from "../support/cli.js"

export const principalSeed = new Uint8Array(32).fill(1)
export const serverSeed = new Uint8Array(32).fill(5)
export const principalKey = keyFromSeed(principalSeed)
export const serverKey = keyFromSeed(serverSeed)
export const TOKEN = "t".repeat(40)

/** A key file holding `seed`, as `mandate keygen` writes one (64 hex digits, mode 0600): the CLI
 * takes keys as files, never as seeds on its command line. */
export const keyFileOf = (seed: Uint8Array): string => {
  const path = join(mkdtempSync(join(tmpdir(), "yea-mcp-key-")), "seed.key")
  writeFileSync(path, Buffer.from(seed).toString("hex") + "\n", { mode: 0o600 })
  return path
}

/** The person's signed policy: reschedule, refund (up to 25.00 USD each) and archive run on their own. */
export const policy: string = Effect.runSync(
  issueRootGrant({
    sub: serverKey,
    caveats: [{ can: ["reschedule", "refund", "archive", "send_email"] }, { each: { of: "spend", max: 2500, scale: 2, unit: "USD" } }, { exp: 4102444800 }]
  }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([7])))), Effect.withClock(fixedClock(1790000000)))
)

export type FormHandler = (req: ElicitRequest["params"]) => ElicitResult

export interface Started {
  readonly client: Client
  readonly db: string
  readonly call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>
  readonly book: () => Promise<{ applied: Array<{ tool: string; summary: string }>; reverted: Array<string>; archived: Array<string> }>
  readonly forms: Array<ElicitRequest["params"]>
  /** What the server wrote to stderr so far. */
  readonly stderr: () => string
}

export interface StartOptions {
  readonly transport: "stdio" | "http"
  readonly form?: FormHandler
  readonly deny?: ReadonlyArray<string>
  readonly policy?: string | null
  readonly principal?: string | null
  /** Variables added to the server's environment (YEA_HOME, YEA_POLICY, YEA_PRINCIPAL_PUB...). */
  readonly env?: Readonly<Record<string, string>>
  /** Keep approvals in this folder (the file store) instead of the SQLite file. */
  readonly store?: string
}

const cliArgs = (o: StartOptions, db: string) => [
  ...cliEntry,
  "yea",
  "mcp-example",
  "--server-key",
  keyFileOf(serverSeed),
  ...(o.store === undefined ? ["--sqlite", db] : ["--store", o.store]),
  ...(o.principal === null ? [] : ["--principal", o.principal ?? principalKey]),
  ...(o.policy === null ? [] : ["--policy", o.policy ?? policy]),
  ...(o.deny ?? []).flatMap((d) => ["--deny", d]),
  ...(o.transport === "http" ? ["--http"] : [])
]

/** Starts the server child and a connected client; both stop with the scope. */
export const start = (o: StartOptions) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Started & { stop: () => Promise<void> }> => {
      const db = join(mkdtempSync(join(tmpdir(), "yea-mcp-")), "approvals.sqlite")
      const forms: Array<ElicitRequest["params"]> = []
      const client = new Client({ name: "test", version: "1.0.0" }, { capabilities: o.form === undefined ? {} : { elicitation: { form: {} } } })
      if (o.form !== undefined) {
        const form = o.form
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          forms.push(req.params)
          return form(req.params)
        })
      }
      let stop: () => Promise<void>
      let err = ""
      const env = Object.fromEntries(Object.entries({ ...process.env, ...o.env }).filter((e): e is [string, string] => e[1] !== undefined))
      if (o.transport === "stdio") {
        const transport = new StdioClientTransport({ command: process.execPath, args: cliArgs(o, db), cwd: repoRoot, stderr: "pipe", env })
        transport.stderr?.on("data", (c: Buffer) => { err += c.toString() })
        await client.connect(transport)
        stop = () => client.close()
      } else {
        const child = spawn(process.execPath, cliArgs(o, db), { cwd: repoRoot, env: { ...env, YEA_HTTP_TOKEN: TOKEN, YEA_SUB: "person-1" }, stdio: ["ignore", "ignore", "pipe"] })
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no URL from the server: ${err}`)), 60_000)
          child.stderr!.on("data", (c: Buffer) => {
            err += c.toString()
            const m = /serving MCP at (\S+)/.exec(err)
            if (m) {
              clearTimeout(timer)
              resolve(m[1])
            }
          })
          child.on("exit", () => reject(new Error(`the server exited: ${err}`)))
        })
        const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } })
        await client.connect(transport)
        stop = async () => {
          await client.close().catch(() => undefined)
          child.kill()
        }
      }
      const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }) as Promise<CallToolResult>
      const book = async () => (await call("book", {})).structuredContent as never
      return { client, db, call, book, forms, stop, stderr: () => err }
    }),
    (s) => Effect.promise(() => s.stop())
  )

export const text = (r: CallToolResult): string => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")

/** `mandate yea approve <code>` as the CLI will run it: the principal signs, into the shared file. */
export const approve = (db: string, code: string, typed = "approve") =>
  Effect.runPromise(
    approveJobCode(code, typed).pipe(
      Effect.provide(Layer.mergeAll(approvalLayer.pipe(Layer.provide(SqliteStore.layer(db))), Signer.fromSeed(principalSeed), RandomBytes.live))
    )
  )
