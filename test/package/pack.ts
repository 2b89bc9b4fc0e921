// The package as a user gets it: dist/ built (and rebuilt when a source is newer, so a stale
// build never passes for the sources), `npm pack`, and the tarball installed into a fresh
// temporary project with no network: `npm ci --offline` from a lockfile derived from this
// repository's, so every dependency comes from the local npm cache at the version this repository
// pins (a project with no lockfile would need the registry's package listings to resolve ranges).
// Install scripts are not run (`--ignore-scripts`): better-sqlite3's would fetch or compile a
// native binary, which needs the network; a test that opens a SQLite store from the install
// provides the compiled addon itself (e2e.test.ts). The pack and install are made once per
// package hash (what the package ships and how it installs) and shared by the files that use them:
// each gets a copy of the installed project of its own (hard links, so a copy costs no disk).
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { builtMark, isStale } from "../../scripts/built.js"
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

/** A lock between test files (each runs in its own process), taken by mkdir; one left by a killed
 * run is taken over after 15 minutes. */
const withLock = async <A>(name: string, fn: () => Promise<A>): Promise<A> => {
  const lock = join(tmpdir(), `mandate-${name}-${repoKey}.lock`)
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
const repoKey = createHash("sha256").update(repoRoot).digest("hex").slice(0, 16)

/**
 * Holds dist/ for `fn`: a rebuild by one file must never rewrite dist/ while another packs it (npm
 * pack read a half-written file once).
 */
const withDist = <A>(fn: () => Promise<A>): Promise<A> => withLock("dist", fn)

/** Hashes of files and folders (paths relative to the repository, in order; absent ones count as
 * absent), the cache keys of the build and of the packed package. */
const hashOf = (paths: ReadonlyArray<string>, skip: (path: string) => boolean = () => false): string => {
  const h = createHash("sha256")
  const add = (rel: string): void => {
    if (skip(rel)) return
    const abs = join(repoRoot, rel)
    if (!existsSync(abs)) return void h.update(`absent ${rel}\0`)
    if (statSync(abs).isDirectory()) {
      for (const e of readdirSync(abs).sort()) add(`${rel}/${e}`)
      return
    }
    h.update(`file ${rel}\0`).update(readFileSync(abs)).update("\0")
  }
  for (const p of paths) add(p)
  return h.digest("hex")
}

/** What `npm run build` reads: the key dist/ was last made current for is kept beside it. */
const BUILD_INPUTS = ["src", "package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build-cli.mjs"]
const builtFor = join(repoRoot, ".tmp", "dist-source-hash")

/**
 * Makes dist/ current once for the sources as they are: built when its recorded source hash differs
 * and its files are older than a source (a fresh `npm ci` has just built it: then nothing to do, and
 * a source touched but unchanged rebuilds nothing). The integration and e2e projects call it from
 * their global setup (test/support/build-setup.ts) before any worker starts; the files that use
 * dist/ call it again, which then only compares the hash.
 */
export const ensureBuilt = (): Promise<void> =>
  withDist(async () => {
    const key = hashOf(BUILD_INPUTS)
    const recorded = existsSync(builtFor) ? readFileSync(builtFor, "utf8") : ""
    const current = existsSync(builtMark(repoRoot)) && (recorded === key || !isStale(repoRoot))
    if (!current) {
      console.log("[notice] dist/ is missing or older than the sources: running `npm run build`")
      const r = await run("npm", ["run", "build"], repoRoot, 600_000)
      if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`)
    }
    mkdirSync(dirname(builtFor), { recursive: true })
    if (recorded !== key) writeFileSync(builtFor, key)
  })

/** A lockfile for a project depending on the tarball alone: this repository's locked runtime
 * dependencies (not its dev dependencies), as they would sit under the consumer's node_modules. */
const consumerLock = (dir: string, tarball: string): unknown => {
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; [k: string]: unknown }>
  }
  const root = lock.packages[""]
  const packages: Record<string, unknown> = {
    "": { name: "consumer", dependencies: { mandate: `file:${tarball}` } },
    "node_modules/mandate": {
      version: root.version,
      resolved: `file:${tarball}`,
      integrity: `sha512-${createHash("sha512").update(readFileSync(join(dir, tarball))).digest("base64")}`,
      license: root.license,
      dependencies: root.dependencies,
      bin: root.bin,
      engines: root.engines
    }
  }
  for (const [k, v] of Object.entries(lock.packages)) if (k.startsWith("node_modules/") && v.dev !== true) packages[k] = v
  return { name: "consumer", lockfileVersion: 3, requires: true, packages }
}

export type Installed =
  | { readonly ok: true; readonly dir: string; readonly tarball: string }
  | { readonly ok: false; readonly dir: string; readonly notice: string }

/** What the package ships (package.json `files`) and how it installs: the key of the shared install. */
const PACKAGE_INPUTS = ["package.json", "package-lock.json", "dist", "scripts/mandate.mjs", "schema", "README.md", "docs"]
const notShipped = (rel: string): boolean => /^dist\/(bin\/meta\.json|bin\.next|bin\.old)$/.test(rel)
/** The installs of this repository's package, one folder per package hash (the newest kept). */
const installs = join(tmpdir(), `mandate-package-${repoKey}`)

interface SharedInstall { readonly ok: boolean; readonly tarball: string; readonly notice: string }

/** Packs the repository and installs the tarball into a project of its own, once per package hash:
 * the test files that use it (install.test.ts, e2e.test.ts) share the one pack and install. */
const sharedInstall = (): Promise<{ readonly base: string; readonly result: SharedInstall }> =>
  withLock("package", async () => {
    const key = hashOf(PACKAGE_INPUTS, notShipped).slice(0, 24)
    const base = join(installs, key)
    const done = join(base, "installed.json")
    if (existsSync(done)) return { base, result: JSON.parse(readFileSync(done, "utf8")) as SharedInstall }
    // Earlier packages of this repository: not used again.
    if (existsSync(installs)) for (const e of readdirSync(installs)) rmSync(join(installs, e), { recursive: true, force: true })
    const dir = join(base, "consumer")
    mkdirSync(dir, { recursive: true })
    // The build is current (ensureBuilt); `prepare` would only build it again.
    const packed = await withDist(() => run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], repoRoot))
    if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`)
    const tarball = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0].filename
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { mandate: `file:${tarball}` } }, null, 2))
    writeFileSync(join(dir, "package-lock.json"), JSON.stringify(consumerLock(dir, tarball), null, 2))
    const r = await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], dir)
    if (r.status !== 0) {
      // Not kept: the next run tries again (the npm cache may have what it lacked by then).
      rmSync(base, { recursive: true, force: true })
      if (!/ENOTCACHED/.test(r.stderr)) throw new Error(`npm ci --offline in ${dir} failed:\n${r.stderr}`)
      const what = /request to (\S+) failed/.exec(r.stderr)?.[1] ?? "a dependency"
      return { base, result: { ok: false, tarball, notice: `[notice] the npm cache lacks ${what}: the install test is skipped (it installs offline only)` } }
    }
    const result: SharedInstall = { ok: true, tarball, notice: "" }
    // Written last: a run killed before this point leaves no install that passes for complete.
    writeFileSync(done, JSON.stringify(result))
    return { base, result }
  })

/** Packs the repository and installs the tarball into a fresh project (the one shared install,
 * copied with hard links into a folder of the caller's own, so that what one test file writes
 * there no other sees). `ok: false` only when the npm cache lacks a dependency (ENOTCACHED): the
 * caller skips with the notice. */
export const packAndInstall = async (): Promise<Installed> => {
  const { base, result } = await sharedInstall()
  const dir = mkdtempSync(join(tmpdir(), "mandate-consumer-"))
  if (!result.ok) return { ok: false, dir, notice: result.notice }
  const copied = await run("cp", ["-al", `${join(base, "consumer")}/.`, dir], repoRoot)
  if (copied.status !== 0) throw new Error(`copying the install failed:\n${copied.stderr}`)
  return { ok: true, dir, tarball: result.tarball }
}
