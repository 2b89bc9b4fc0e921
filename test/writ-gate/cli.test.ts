// `mandate writ gate` as a user runs it: the ready line, a mapping refused at start with one error
// line, and the SQLite store surviving a restart (spec section 9): a replay after the restart is
// answered from the store and the API is not called again.
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { mandate } from "../cli-writ/run.js"
import { spawnMandate } from "../support/cli.js"

const did = (out: string) => out.match(/did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+/)![0]

/** Starts the gate; resolves with its ready line, rejects if it exits first. */
const startGate = (args: ReadonlyArray<string>) =>
  new Promise<{ child: ChildProcess; ready: { url: string; durable: boolean; did: string } }>((resolve, reject) => {
    const child = spawnMandate(["writ", "gate", ...args])
    let out = ""
    let err = ""
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n").find((l) => l.startsWith("{"))
      if (line !== undefined && line.endsWith("}")) resolve({ child, ready: JSON.parse(line) })
    })
    child.on("exit", (code) => reject(new Error(`gate exited (${code}): ${err}`)))
  })

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.removeAllListeners("exit")
    child.on("exit", () => resolve())
    child.kill("SIGTERM")
  })

const children: Array<ChildProcess> = []
afterAll(async () => {
  for (const c of children) await stop(c)
})

describe("mandate writ gate (CLI)", () => {
  it("refuses an ambiguous mapping at start with one error line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-gate-cli-"))
    await mandate("keygen", join(dir, "g.key"))
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ upstream: "http://127.0.0.1:9", routes: { r: { method: "POST", path: "/v1/{id}", act: "x", bind: {} } } }))
    const r = await mandate("writ", "gate", join(dir, "bad.json"), "--key", join(dir, "g.key"), "--port", "0")
    expect(r.status).toBe(1)
    expect(r.stderr.trim()).toMatch(/^error: gate\/bad_mapping at .*bad\.json: routes\.r\.path: \{id\} is not bound/)
  }, 300_000)

  it("serves from a mapping file with the SQLite store, which a restart keeps", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-gate-cli-"))
    const seen: Array<string> = []
    const api = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${body}`)
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: `o-${seen.length}` }))
      })
    })
    await new Promise<void>((r) => api.listen(0, "127.0.0.1", () => r()))
    try {
      const port = (api.address() as { port: number }).port
      const [a, g] = await Promise.all([mandate("keygen", join(dir, "a.key")), mandate("keygen", join(dir, "g.key"))])
      const [A, G] = [did(a.stdout), did(g.stdout)]
      writeFileSync(join(dir, "gate.json"), JSON.stringify({
        upstream: `http://127.0.0.1:${port}`,
        routes: { create: { method: "POST", path: "/v1/orders", act: "orders/create", bind: { amount: "$.total_cents" }, used: { amount: "$.total_cents" } } }
      }))
      await mandate("writ", "issue", "--key", join(dir, "a.key"), "--hld", G, "--act", "orders", "--max", "amount=5000", "--count", "uses=5", "--ttl", "3600", "--out", join(dir, "grant.json"))
      const c = await mandate("writ", "call", "--key", join(dir, "a.key"), "--chain", join(dir, "grant.json"), "--op", "orders/create", "--args", '{"amount":1200}', "--out", join(dir, "call.json"))
      expect(c.status).toBe(0)
      const callHeader = Buffer.from(readFileSync(join(dir, "call.json"))).toString("base64url")
      const args = [join(dir, "gate.json"), "--key", join(dir, "g.key"), "--root", A, "--store", join(dir, "gate.sqlite"), "--port", "0"]
      const send = (url: string) =>
        fetch(`${url}/v1/orders`, { method: "POST", headers: { "writ-call": callHeader, "content-type": "application/json" }, body: '{"total_cents":1200}' })

      const first = await startGate(args)
      children.push(first.child)
      expect(first.ready).toMatchObject({ durable: true, did: G })
      const r1 = await send(first.ready.url)
      expect(r1.status).toBe(201)
      const tally = r1.headers.get("writ-tally")
      expect(tally).not.toBeNull()
      await stop(first.child)

      const second = await startGate(args)
      children.push(second.child)
      const r2 = await send(second.ready.url)
      expect(r2.status).toBe(200)
      const stored = (await r2.json()) as { tally: unknown }
      expect(stored.tally).toEqual(JSON.parse(Buffer.from(tally!, "base64url").toString("utf8")))
      expect(seen).toEqual(['POST /v1/orders {"total_cents":1200}'])
      await stop(second.child)
    } finally {
      await new Promise<void>((r) => api.close(() => r()))
    }
  }, 600_000)
})
