// The package as a user gets it: dist/ built (and rebuilt when a source is newer, so a stale
// build never passes for the sources), `npm pack`, and the tarball installed into a fresh
// temporary project with no network: `npm ci --offline` from a lockfile derived from this
// repository's, so every dependency comes from the local npm cache at the version this repository
// pins (a project with no lockfile would need the registry's package listings to resolve ranges).
// Install scripts are not run (`--ignore-scripts`): better-sqlite3's would fetch or compile a
// native binary, which needs the network; a test that opens a SQLite store from the install
// provides the compiled addon itself (e2e.test.ts).
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isStale } from "../../scripts/built.js"
import { repoRoot } from "../support/shared.js"

export interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion without blocking the test worker, killed after `timeoutMs`. */
export const run = (cmd: string, args: ReadonlyArray<string>, cwd: string, timeoutMs = 240_000): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, NO_COLOR: "1", npm_config_update_notifier: "false" }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

/**
 * Holds dist/ for `fn` across test files (each runs in its own process): a rebuild by one file
 * must never rewrite dist/ while another packs it (npm pack read a half-written file once). The
 * lock is a directory, taken by mkdir; one left by a killed run is taken over after 15 minutes.
 */
const withDist = async <A>(fn: () => Promise<A>): Promise<A> => {
  const lock = join(tmpdir(), `mandate-dist-${createHash("sha256").update(repoRoot).digest("hex").slice(0, 16)}.lock`)
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true })
      } catch { /* released meanwhile */ }
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/** Builds dist/ when it is stale (a fresh `npm ci` has just built it: then nothing to do). */
export const ensureBuilt = (): Promise<void> =>
  withDist(async () => {
    if (!isStale(repoRoot)) return
    console.log("[notice] dist/ is missing or older than the sources: running `npm run build`")
    const r = await run("npm", ["run", "build"], repoRoot, 600_000)
    if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`)
  })

/** A lockfile for a project depending on the tarball alone: this repository's locked runtime
 * dependencies (not its dev dependencies), as they would sit under the consumer's node_modules. */
const consumerLock = (tarball: string): unknown => {
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; [k: string]: unknown }>
  }
  const root = lock.packages[""]
  const packages: Record<string, unknown> = {
    "": { name: "consumer", dependencies: { mandate: `file:${tarball}` } },
    "node_modules/mandate": {
      version: root.version,
      resolved: `file:${tarball}`,
      integrity: `sha512-${createHash("sha512").update(readFileSync(join(tmpRoot(), tarball))).digest("base64")}`,
      license: root.license,
      dependencies: root.dependencies,
      bin: root.bin,
      engines: root.engines
    }
  }
  for (const [k, v] of Object.entries(lock.packages)) if (k.startsWith("node_modules/") && v.dev !== true) packages[k] = v
  return { name: "consumer", lockfileVersion: 3, requires: true, packages }
}

let consumerDir: string | undefined
const tmpRoot = (): string => consumerDir ?? (consumerDir = mkdtempSync(join(tmpdir(), "mandate-consumer-")))

export type Installed =
  | { readonly ok: true; readonly dir: string; readonly tarball: string }
  | { readonly ok: false; readonly dir: string; readonly notice: string }

/** Packs the repository and installs the tarball into a fresh project. `ok: false` only when the
 * npm cache lacks a dependency (ENOTCACHED): the caller skips with the notice. */
export const packAndInstall = async (): Promise<Installed> => {
  const dir = tmpRoot()
  // The build is current (ensureBuilt); `prepare` would only build it again.
  const packed = await withDist(() => run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], repoRoot))
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`)
  const tarball = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0].filename
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { mandate: `file:${tarball}` } }, null, 2))
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(consumerLock(tarball), null, 2))
  const r = await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], dir)
  if (r.status === 0) return { ok: true, dir, tarball }
  if (/ENOTCACHED/.test(r.stderr)) {
    const what = /request to (\S+) failed/.exec(r.stderr)?.[1] ?? "a dependency"
    return { ok: false, dir, notice: `[notice] the npm cache lacks ${what}: the install test is skipped (it installs offline only)` }
  }
  throw new Error(`npm ci --offline in ${dir} failed:\n${r.stderr}`)
}
