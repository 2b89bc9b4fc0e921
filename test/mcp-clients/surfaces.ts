// Mandate's MCP surfaces as a user starts them (the bundled `mandate` CLI as child processes, on
// loopback), handed to a third-party client as an endpoint: stdio (the client starts the command)
// or Streamable HTTP (started here, the URL read from what the command prints). Every process is
// stopped with the test's scope and every wait is bounded.
import { Effect, Layer, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/cli/demo/stage.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { cliEntry } from "../support/cli.js"
import { BEARER, keysFile, startListening } from "../support/remote-mcp.js"
import { repoRoot } from "../support/shared.js"
import { files, grant, root } from "../writ-mcp/support.js"
import { keyFileOf, policy as jobPolicy, principalKey, principalSeed, serverSeed, TOKEN } from "../yea-mcp/harness.js"
import type { Endpoint, HttpEndpoint, StdioEndpoint } from "./clients.js"

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === "string")),
  NO_COLOR: "1",
  ...extra
})

const mandate = (args: ReadonlyArray<string>, extra: Record<string, string> = {}): StdioEndpoint => ({
  _tag: "stdio",
  command: process.execPath,
  args: [...cliEntry, ...args],
  env: env(extra),
  cwd: repoRoot
})

/** Starts a child and waits (at most 60 s) until its output matches `ready`; killed with the scope. */
const started = (command: string, args: ReadonlyArray<string>, extra: Record<string, string>, ready: RegExp) =>
  Effect.acquireRelease(
    Effect.async<{ child: ChildProcess; match: RegExpExecArray }, Error>((resume) => {
      const child = spawn(command, [...args], { cwd: repoRoot, env: env(extra), stdio: ["ignore", "pipe", "pipe"] })
      let seen = ""
      let done = false
      const finish = (r: Effect.Effect<{ child: ChildProcess; match: RegExpExecArray }, Error>) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resume(r)
      }
      const timer = setTimeout(() => { child.kill("SIGKILL"); finish(Effect.fail(new Error(`not ready in 60 s: ${seen}`))) }, 60_000)
      const take = (c: Buffer) => {
        seen += c.toString()
        const m = ready.exec(seen)
        if (m !== null) finish(Effect.succeed({ child, match: m }))
      }
      child.stdout!.on("data", take)
      child.stderr!.on("data", take)
      child.on("exit", () => finish(Effect.fail(new Error(`exited before it was ready: ${seen}`))))
    }),
    ({ child }) => Effect.sync(() => child.kill())
  ).pipe(Effect.orDie)

const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))

/** The lines of a receipts file (JSON lines), as `{tool, st, code}`. */
export const receiptsOf = (file: string): ReadonlyArray<string> =>
  readFileSync(file, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => {
    const r = JSON.parse(l) as { tool: string; tally: { st: string; err?: { code: string } } }
    return `${r.tool}:${r.tally.st === "ok" ? "ok" : r.tally.err?.code ?? r.tally.st}`
  })

// ---------------------------------------------------------------------------------------------
// Writ: `mcp-proxy` and `mcp-gate`, toward their client on stdio, or Streamable HTTP with
// `--listen` (docs/mcp-gate.md, "Serving remote clients"); the gate reaches its plain server over
// stdio or Streamable HTTP.

/** A grant from the test root to the test agent: `echo` only, once. */
const echoOnce = () => grant({ act: { t: "prefix", v: "mcp/tools/echo" }, uses: { t: "count", v: 1 } })

/** `proxyEcho` served over Streamable HTTP (`--listen` on loopback, `--keys`), a process killed
 * with the scope; the endpoint carries the bearer key. */
export const proxyEchoHttp = Effect.gen(function*() {
  const f = files(yield* echoOnce())
  const receipts = join(f.dir, "receipts.jsonl")
  const listening = yield* startListening([
    "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts,
    "--listen", "127.0.0.1:0", "--keys", keysFile(), "--",
    process.execPath, ...cliEntry, "writ", "mcp-echo", "--key", f.serverKey, "--root", root.did
  ])
  const endpoint: HttpEndpoint = { _tag: "http", url: listening.url, headers: { authorization: `Bearer ${BEARER}` } }
  return { endpoint, receipts }
})

/** `mandate writ mcp-proxy -- mandate writ mcp-echo` (a Writ server), the grant allowing `echo` once. */
export const proxyEcho = Effect.gen(function*() {
  const f = files(yield* echoOnce())
  const receipts = join(f.dir, "receipts.jsonl")
  const endpoint = mandate([
    "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts, "--",
    process.execPath, ...cliEntry, "writ", "mcp-echo", "--key", f.serverKey, "--root", root.did
  ])
  return { endpoint, receipts }
})

export const everythingScript = join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")

/** `server-everything` on Streamable HTTP on a free loopback port; its URL. */
const everythingHttp = Effect.gen(function*() {
  const port = yield* freePort
  yield* started(process.execPath, [everythingScript, "streamableHttp"], { PORT: String(port) }, /listening/i)
  return `http://127.0.0.1:${port}/mcp`
})

/** `mandate writ mcp-proxy -- mandate writ mcp-gate -- server-everything`, the plain server on stdio
 * or on Streamable HTTP (`--http URL`); the grant allows `echo` once. */
export const proxyGateEverything = (upstream: "stdio" | "http") =>
  Effect.gen(function*() {
    const f = files(yield* echoOnce())
    const receipts = join(f.dir, "receipts.jsonl")
    const server = upstream === "stdio" ? ["--", process.execPath, everythingScript, "stdio"] : ["--http", yield* everythingHttp]
    const endpoint = mandate([
      "writ", "mcp-proxy", "--key", f.agentKey, "--grant", f.grantFile, "--receipts", receipts, "--",
      process.execPath, ...cliEntry, "writ", "mcp-gate", "--key", f.serverKey, "--root", root.did,
      "--store", join(f.dir, "gate.sqlite"), ...server
    ])
    return { endpoint, receipts }
  })

/** `mandate writ mcp-gate -- server-everything` with no proxy: a client that signs no Writ call. */
export const gateAlone = Effect.gen(function*() {
  const f = files([])
  return mandate(["writ", "mcp-gate", "--key", f.serverKey, "--root", root.did, "--", process.execPath, everythingScript, "stdio"])
})

// ---------------------------------------------------------------------------------------------
// YEA: the bridge `mandate yea mcp` (stdio and `--http`) and the job server `mandate yea mcp-example`.

const agentSeed = new Uint8Array(32).fill(2)
/** The agent's grant at the example shop: spend up to 20.00 USD per order. */
const shopGrant: string = Effect.runSync(
  issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: ["shop.example"] }, { each: { of: "spend", max: 2000, scale: 2, unit: "USD" } }, { exp: 4102444800 }] })
    .pipe(Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([9])))))
)

const httpOf = (match: RegExpExecArray): HttpEndpoint => ({ _tag: "http", url: match[1], headers: { Authorization: `Bearer ${TOKEN}` } })

/** `mandate yea mcp URL` in front of the example shop (`mandate yea serve shop`, yea:// on loopback),
 * its YEA home a fresh temporary folder (it keeps pending proposals and consents there). */
export const bridge = (transport: "stdio" | "http"): Effect.Effect<Endpoint, never, Scope.Scope> =>
  Effect.gen(function*() {
    const home = tempDir("mcp-clients-yea-home-")
    const homeEnv = { HOME: home, MANDATE_HOME: join(home, ".mandate") }
    const shop = yield* started(process.execPath, [...cliEntry, "yea", "serve", "shop", "--port", "0", "--trust", principalKey], homeEnv, /serving \S+ at (\S+)/)
    const args = ["yea", "mcp", shop.match[1], "--agent-key", keyFileOf(agentSeed), "--grant", shopGrant]
    if (transport === "stdio") return mandate(args, homeEnv)
    const served = yield* started(process.execPath, [...cliEntry, ...args, "--http", "--port", "0"], { ...homeEnv, YEA_HTTP_TOKEN: TOKEN }, /serving MCP at (\S+)/)
    return httpOf(served.match)
  })

/** `mandate yea mcp-example`: job tools under the person's signed policy (refunds up to 25.00 USD
 * each run on their own), approvals in a SQLite file. */
export const jobServer = (transport: "stdio" | "http"): Effect.Effect<Endpoint, never, Scope.Scope> =>
  Effect.gen(function*() {
    const home = tempDir("mcp-clients-job-home-")
    const homeEnv = { HOME: home, MANDATE_HOME: join(home, ".mandate") }
    const args = [
      "yea", "mcp-example", "--server-key", keyFileOf(serverSeed), "--sqlite", join(home, "approvals.sqlite"),
      "--principal", principalKey, "--policy", jobPolicy
    ]
    if (transport === "stdio") return mandate(args, homeEnv)
    const served = yield* started(process.execPath, [...cliEntry, ...args, "--http"], { ...homeEnv, YEA_HTTP_TOKEN: TOKEN, YEA_SUB: "person-1" }, /serving MCP at (\S+)/)
    return httpOf(served.match)
  })
