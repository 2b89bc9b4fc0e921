// Shared by the HTTP binding tests and the executor benchmark: keys from fixed seeds, signed writs,
// calls and revokes (section 1.4), and a `writ serve` child process on a SQLite file.
import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { identity } from "../../src/writ/sign.js"
import { type Key as FixtureKey, key as fixtureKey } from "../writ-executor/fixtures.js"

export const repo = resolve(import.meta.dirname, "../..")

export interface Key extends FixtureKey {
  readonly hex: string
}

/** The executor fixtures' key (a fixed seed of byte n), plus its seed in hex for key files. */
export const key = (n: number): Key => {
  const k = fixtureKey(n)
  return { ...k, hex: Buffer.from(k.seed).toString("hex") }
}

/** One raw answer of the HTTP binding: its status and the exact bytes of its body. */
export interface Answer {
  readonly status: number
  readonly bytes: Buffer
}

/** POSTs `body` as application/writ+json on `agent` (keep-alive pools) and reads the raw answer. */
export const postRaw = (agent: Http.Agent, url: string | URL, body: Buffer): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = Http.request(url, {
      agent, method: "POST",
      headers: { "content-type": "application/writ+json", "content-length": String(body.length) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** mulberry32: a small seeded generator, so a test's or benchmark's mix repeats run to run. */
export const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * A count of requests that came back and waits on it: the kill tests choose the moment of a kill by
 * how many requests of the load came back since it started (seeded), not by a wall-clock delay, so a kill
 * finds the same amount of work done however loaded the machine is, and no test sleeps longer
 * than the work takes. `after(n, gone)` resolves once `n` more have come back, or when `gone`
 * settles first (the process died on its own: the test then fails on what it finds).
 */
export const answerCount = () => {
  let n = 0
  const waiting: Array<{ readonly at: number; readonly wake: () => void }> = []
  return {
    /** One more answer. */
    add: (): void => {
      n++
      for (let i = waiting.length - 1; i >= 0; i--) {
        if (n >= waiting[i].at) waiting.splice(i, 1)[0].wake()
      }
    },
    after: (more: number, gone: Promise<unknown>): Promise<void> =>
      new Promise<void>((wake) => {
        if (more <= 0) return wake()
        waiting.push({ at: n + more, wake })
        void gone.then(() => wake(), () => wake())
      })
  }
}

/** Nonces and ids: 16 bytes from a counter and a per-run tag, unique within a run. */
let counter = 0
export const nonce = (tag = 0): string => {
  const b = new Uint8Array(16)
  const v = new DataView(b.buffer)
  v.setUint32(0, ++counter)
  v.setUint32(4, tag)
  b[15] = 7
  return encodeBase64url(b)
}

/**
 * Six hours after this test run started, by the machine's clock, which the served executors read:
 * ahead of any test's end, and within section 12's 24-hour limit on a root's remaining lifetime
 * that an executor applies by default.
 */
export const EXP = Math.floor(Date.now() / 1000) + 6 * 3600

export const writ = (iss: Key, hld: Key, bnd: JsonObject, parent: JsonObject | null = null, exp = EXP): JsonObject =>
  iss.sign("writ", {
    v: 1, typ: "writ", iss: iss.did, hld: hld.did, bnd,
    prv: parent === null ? null : identity(parent), exp, nnc: nonce(0x5717)
  })

export const call = (from: Key, chain: ReadonlyArray<JsonObject>, op: string, args: JsonObject = {}, id = nonce(0xca11)): JsonObject =>
  from.sign("call", { v: 1, typ: "call", id, chain, from: from.did, op, args })

export const revoke = (iss: Key, chain: ReadonlyArray<JsonObject>): JsonObject =>
  iss.sign("revoke", {
    v: 1, typ: "revoke", writ: chain.length === 0 ? "*" : identity(chain[chain.length - 1]), iss: iss.did, chain
  })

export const prefix = (v: string): JsonObject => ({ t: "prefix", v })

export { identity }

/** A temporary directory for a test's files. */
export const tempDir = (name: string): string => mkdtempSync(join(tmpdir(), `mandate-${name}-`))

/** Writes an executor key file as `mandate keygen` does (64 hex digits, mode 0600). */
export const writeKeyFile = (dir: string, k: Key): string => {
  const p = join(dir, "executor.key")
  writeFileSync(p, `${k.hex}\n`, { mode: 0o600 })
  chmodSync(p, 0o600)
  return p
}

export interface ServeProcess {
  readonly child: ChildProcess
  readonly url: string
  readonly did: string
  readonly resolved: number
  /** Everything the process has written to stdout and stderr so far (its log lines). */
  readonly output: () => string
  /** Ends the process with SIGKILL and waits for it to exit. */
  readonly kill: () => Promise<void>
  /** Settles when the process has exited, by a kill or on its own. */
  readonly exited: Promise<void>
}

/**
 * `writ serve` and the test handler bundled once with esbuild (a dependency of tsx and vitest), so
 * that a restart costs one process start, not a TypeScript compile of every module: the kill test
 * restarts the executor dozens of times on two shared cores. Packages stay external and resolve
 * from the repository's node_modules.
 */
let bundled: Promise<{ readonly serve: string; readonly handler: string }> | undefined
export const serveBundle = (): Promise<{ readonly serve: string; readonly handler: string }> => {
  bundled ??= (async () => {
    const esbuild = await import("esbuild")
    const out = join(repo, "node_modules/.cache/mandate-writ-http")
    mkdirSync(out, { recursive: true })
    const one = async (entry: string, name: string) => {
      const outfile = join(out, name)
      await esbuild.build({
        entryPoints: [join(repo, entry)], bundle: true, platform: "node", format: "esm",
        packages: "external", outfile, logLevel: "warning"
      })
      return outfile
    }
    const files = {
      serve: await one("src/cli/writ-serve.ts", `serve-${process.pid}.mjs`),
      handler: await one("test/bind-writ-http/fixtures/handler.ts", `handler-${process.pid}.mjs`)
    }
    // This process's bundles go when it does.
    process.once("exit", () => {
      for (const f of Object.values(files)) rmSync(f, { force: true })
    })
    return files
  })()
  return bundled
}

/**
 * Spawns `writ serve` (bundled src/cli/writ-serve.ts) and waits for its ready line. `args` are its
 * flags (the test handler is passed as --handler); `env` adds variables (the handler's log and delay).
 */
export const spawnServe = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<ServeProcess> => {
  const b = await serveBundle()
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [b.serve, "--handler", b.handler, ...args], {
      cwd: repo,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    const exited = new Promise<void>((r) => child.once("exit", () => r()))
    const onExit = (code: number | null) => reject(new Error(`writ serve exited (${code}) before ready: ${err}${out}`))
    child.once("exit", onExit)
    child.stderr?.on("data", (d: Buffer) => { err += d.toString() })
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
      const nl = out.indexOf("\n")
      if (nl < 0) return
      child.off("exit", onExit)
      try {
        const ready = JSON.parse(out.slice(0, nl)) as { url: string; did: string; resolved: number }
        resolvePromise({
          child,
          url: ready.url,
          did: ready.did,
          resolved: ready.resolved,
          output: () => out + err,
          exited,
          kill: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
            await exited
          }
        })
      } catch (e) {
        reject(new Error(`unexpected ready line: ${out}`))
      }
    })
  })
}
