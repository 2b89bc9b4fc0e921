// The package a user installs. dist/ is built (ensureBuilt), packed and installed from
// the tarball into a fresh project offline (pack.ts); there, (a) a plain .mjs imports `mandate` on
// Node with no loader and verifies a writ, and the library example of docs/library.md runs as JavaScript,
// (b) `npx mandate writ verify` checks a conformance corpus writ, from another directory and
// through a symlink, (c) tsc checks a consumer .ts against the shipped declarations. Also: the
// launcher's one-line error when the CLI is not built, and which modules a command loads (from
// the bundle's metafile).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { transform } from "esbuild"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { repoRoot } from "../support/shared.js"
import { ensureBuilt, type Installed, packAndInstall, type Ran, run } from "./pack.js"

vi.setConfig({ testTimeout: 240_000, hookTimeout: 900_000 })

/** One line on stderr in the documented form and no stack trace. */
const oneLineError = (r: Ran, reason: string) => {
  expect(r.status, r.stdout + r.stderr).toBe(1)
  expect(r.stderr).toMatch(new RegExp(`^error: ${reason} at \\S.*: \\S.*\\n$`))
  expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
}

// A writ from this repository's conformance corpus (section 14), read in place.
const vectorFile = join(repoRoot, "conformance", "vectors", "verify_writ.child_writ.json")
const vector = JSON.parse(readFileSync(vectorFile, "utf8")) as { expect: string; input: { writ: { exp: number } } }
const NOW = String(vector.input.writ.exp - 3600)

let installed: Installed
const scratch = mkdtempSync(join(tmpdir(), "mandate-launcher-"))

beforeAll(async () => {
  await ensureBuilt()
  installed = await packAndInstall()
  if (!installed.ok) console.log(installed.notice)
})
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
  if (installed !== undefined) rmSync(installed.dir, { recursive: true, force: true })
})

/** The consumer project, or skip the test with the notice printed in beforeAll. */
const consumer = (skip: () => void): string => {
  if (!installed.ok) skip()
  return installed.dir
}

describe("the packed package, installed offline into a fresh project", () => {
  it("ships dist/ and the launcher, not the sources, tests or the bundle's metafile", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    const files = (await run("find", [".", "-type", "f"], join(dir, "node_modules", "mandate"))).stdout.split("\n")
    expect(files).toContain("./dist/index.js")
    expect(files).toContain("./dist/index.d.ts")
    expect(files).toContain("./dist/bin/main.js")
    expect(files).toContain("./scripts/mandate.mjs")
    expect(files.filter((f) => /^\.\/(src|test)\//.test(f) || f.endsWith("meta.json") || f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([])
  })

  it("(a) a plain .mjs imports mandate and mandate/writ on Node without a loader and verifies a writ", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    writeFileSync(join(dir, "verify.mjs"), [
      `import { readFileSync } from "node:fs"`,
      `import { Effect } from "effect"`,
      `import { Writ } from "mandate"`,
      `import { Received, verifyWrit } from "mandate/writ"`,
      `const bytes = JSON.stringify(JSON.parse(readFileSync(process.argv[2], "utf8")).input.writ)`,
      `const ok = await Effect.runPromise(Writ.verifyWrit(new Writ.Received(bytes)))`,
      `console.log("valid", ok.id)`,
      `const bad = await Effect.runPromise(Effect.flip(verifyWrit(new Received(bytes.replace(/"exp":(\\d+)/, (_, n) => '"exp":' + (Number(n) + 1))))))`,
      `console.log("altered", bad.reason)`
    ].join("\n"))
    const r = await run(process.execPath, ["verify.mjs", vectorFile], dir)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^valid [A-Za-z0-9_-]{43}\naltered bad_signature\n$/)
  })

  it("(a) the library example of docs/library.md runs as plain JavaScript against the installed package", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    const block = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(repoRoot, "docs", "library.md"), "utf8"))
    expect(block).not.toBeNull()
    // Its type annotations removed, nothing else: what a JavaScript user would write.
    const js = (await transform(block![1], { loader: "ts", format: "esm", target: "node20" })).code
    writeFileSync(join(dir, "example.mjs"), js)
    const r = await run(process.execPath, ["example.mjs"], dir)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("widen: not_narrowed")
    expect(r.stdout).toMatch(/call: [A-Za-z0-9_-]{43} verified under 2 writs/)
    expect(r.stdout).toContain("overcharge: out_of_bounds")
    expect(r.stdout).toContain("altered: bad_signature")
  })

  it("(b) `npx mandate writ verify` checks a corpus writ; a tampered one is one error line", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    writeFileSync(join(dir, "w.json"), JSON.stringify(vector.input.writ))
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ ...vector.input.writ, exp: vector.input.writ.exp + 1 }))
    const [good, bad, usage] = await Promise.all([
      run("npx", ["--no-install", "mandate", "writ", "verify", "w.json", "--now", NOW], dir),
      run("npx", ["--no-install", "mandate", "writ", "verify", "bad.json", "--now", NOW], dir),
      run("npx", ["--no-install", "mandate", "writ", "verify", "w.json", "--now", "soon"], dir)
    ])
    expect(good.status, good.stderr).toBe(0)
    expect(good.stdout).toMatch(/^writ: valid\n/)
    expect(bad.status).toBe(1)
    expect(bad.stdout).toContain("writ: invalid: bad_signature")
    oneLineError(usage, "mandate/usage")
  })

  it("(b) the bin works from any directory and through a symlink", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    const link = join(scratch, "m")
    symlinkSync(join(dir, "node_modules", ".bin", "mandate"), link)
    const [version, verify] = await Promise.all([
      run(link, ["--version"], "/"),
      run(link, ["writ", "verify", join(dir, "w.json"), "--now", NOW], scratch)
    ])
    expect(version.stdout.trim()).toBe("mandate 0.1.0")
    expect(verify.status, verify.stderr).toBe(0)
    expect(verify.stdout).toMatch(/^writ: valid\n/)
  })

  it("(c) a consumer .ts type-checks against the shipped declarations, and a misuse does not", async (ctx) => {
    const dir = consumer(() => ctx.skip())
    const block = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(repoRoot, "docs", "library.md"), "utf8"))![1]
    writeFileSync(join(dir, "readme.ts"), block)
    writeFileSync(join(dir, "consumer.ts"), [
      `import { Effect } from "effect"`,
      `import { Kernel } from "mandate"`,
      `import { Received, verifyWrit, type WritError } from "mandate/writ"`,
      `export const reason: Effect.Effect<string, never> = verifyWrit(new Received("{}")).pipe(`,
      `  Effect.map((w) => w.id),`,
      `  Effect.catchAll((e: WritError) => Effect.succeed(e.reason))`,
      `)`,
      `export const did: string = Kernel.didKeyFromPublicKey(Kernel.Signer.make(new Uint8Array(32)).publicKey)`
    ].join("\n"))
    writeFileSync(join(dir, "misuse.ts"), [
      `import { verifyWrit } from "mandate/writ"`,
      `export const n: number = verifyWrit`
    ].join("\n"))
    const tsconfig = (files: ReadonlyArray<string>) => JSON.stringify({
      compilerOptions: {
        target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true,
        skipLibCheck: true, types: ["node"], typeRoots: [join(repoRoot, "node_modules", "@types")]
      },
      files
    })
    writeFileSync(join(dir, "tsconfig.json"), tsconfig(["readme.ts", "consumer.ts"]))
    writeFileSync(join(dir, "tsconfig.misuse.json"), tsconfig(["misuse.ts"]))
    const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc")
    const [ok, misuse] = await Promise.all([
      run(process.execPath, [tsc, "-p", "tsconfig.json"], dir),
      run(process.execPath, [tsc, "-p", "tsconfig.misuse.json"], dir)
    ])
    expect(ok.status, ok.stdout).toBe(0)
    // The declarations are real types, not `any`: assigning a function to a number is refused.
    expect(misuse.status).not.toBe(0)
    expect(misuse.stdout).toContain("misuse.ts(2,14): error TS2322")
  })
})

describe("the launcher (scripts/mandate.mjs)", () => {
  it("prints one error line, no stack trace, when the command line is not built", async () => {
    mkdirSync(join(scratch, "clone", "scripts"), { recursive: true })
    copyFileSync(join(repoRoot, "scripts", "mandate.mjs"), join(scratch, "clone", "scripts", "mandate.mjs"))
    oneLineError(await run(process.execPath, [join(scratch, "clone", "scripts", "mandate.mjs"), "--help"], scratch), "mandate/not_built")
  })

  it("is on the path as `npx mandate` in this clone after install", async () => {
    const r = await run("npx", ["--no-install", "mandate", "--version"], repoRoot)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe("mandate 0.1.0")
  })
})

describe("the bundled command line loads only what the command run needs", () => {
  interface Meta { outputs: Record<string, { entryPoint?: string; imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown> }> }
  const meta = () => JSON.parse(readFileSync(join(repoRoot, "dist", "bin", "meta.json"), "utf8")) as Meta
  /** The sources in the chunks loaded at start for these entry modules (static imports only: a
   * dynamic import runs only when its command is chosen). */
  const loaded = (m: Meta, entries: ReadonlyArray<string>): ReadonlyArray<string> => {
    const seen = new Set<string>()
    const queue = Object.entries(m.outputs).filter(([, o]) => entries.includes(o.entryPoint ?? "")).map(([k]) => k)
    while (queue.length > 0) {
      const o = queue.pop()!
      if (seen.has(o)) continue
      seen.add(o)
      for (const i of m.outputs[o].imports) if (i.kind === "import-statement" && m.outputs[i.path] !== undefined) queue.push(i.path)
    }
    return [...new Set([...seen].flatMap((o) => Object.keys(m.outputs[o].inputs)))].filter((f) => f.startsWith("src/"))
  }

  it("`mandate --help` loads no command module", () => {
    // The entry, the run function, the run's streams (CliIo), the tree of lazy entries, the help
    // drawn from it (with the edit distance of its did-you-mean) and the CommandPath tag: nothing
    // of any command.
    const own = ["src/cli/main.ts", "src/cli/run.ts", "src/cli/io.ts", "src/cli/tree.ts", "src/cli/help.ts", "src/cli/help-model.ts", "src/cli/where.ts", "src/kernel/edit-distance.ts"]
    expect(loaded(meta(), ["src/cli/main.ts"])).toEqual(expect.arrayContaining(own))
    expect(loaded(meta(), ["src/cli/main.ts"]).filter((f) => !own.includes(f))).toEqual([])
  })

  it("`mandate writ verify` loads neither YEA nor the ledger, the executor, the stores or the transports", () => {
    const files = loaded(meta(), ["src/cli/main.ts", "src/cli/writ-verify.ts"])
    expect(files).toContain("src/writ/chain.ts")
    expect(files.filter((f) => /^src\/(yea|ledger|store|bind|accounting|writ\/executor)\/|^src\/cli\/(yea|demo|writ-serve|console)/.test(f))).toEqual([])
  })
})
