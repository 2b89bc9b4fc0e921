// The job server's key file (SPEC-mcp-ts, options table, `serverKey`): `mandate yea mcp-example`
// without --server-key uses `<YEA home>/server/billing.key`, created on the first run (0600 in a
// 0700 folder) and read back under the row's rules; `mandate yea service-id NAME` reads
// `<home>/server/NAME.key` under the same rules. The key resolution is tested directly (the server
// itself serves stdio until its input ends); service-id through the CLI in this process.
import { describe, expect, it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Effect, Either, Option } from "effect"
import { afterAll } from "vitest"
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { exampleServerKey } from "../../src/cli/yea-mcp.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { type Homes, errorLine, homes, mandate, writeSeed } from "./run.js"

const made: Array<Homes> = []
const fresh = (): Homes => {
  const h = homes()
  made.push(h)
  return h
}
afterAll(() => made.forEach((h) => rmSync(h.root, { recursive: true, force: true })))

/** The key `yea mcp-example` would use, in the run's environment `h.env`. */
const resolve = (h: Homes, serverKey: Option.Option<string> = Option.none()) =>
  exampleServerKey({ serverKey, serverSeed: Option.none() }).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(h.env).filter((e): e is [string, string] => e[1] !== undefined)))),
    Effect.provide(NodeContext.layer)
  )
const refusal = (h: Homes) => Effect.map(Effect.either(resolve(h)), (e) => (Either.isLeft(e) ? `${e.left.reason} ${e.left.path}` : "read"))

const mode = (path: string): number => statSync(path).mode & 0o777
const keyPath = (h: Homes): string => join(h.home, "server", "billing.key")
/** A home whose billing key exists (made by a first run). */
const withKey = () =>
  Effect.gen(function* () {
    const h = fresh()
    const seed = yield* resolve(h)
    return { h, seed, path: keyPath(h) }
  })

describe("the job server's key file", () => {
  it.effect("is created once, 0600 in a 0700 folder, and gives the same service id on the next run", () =>
    Effect.gen(function* () {
      const h = fresh()
      expect(existsSync(h.home)).toBe(false)
      const first = yield* resolve(h)
      expect(mode(join(h.home, "server"))).toBe(0o700)
      expect(mode(keyPath(h))).toBe(0o600)
      // The seed as `mandate keygen` writes it, and nothing left behind from the temporary file.
      expect(Buffer.from(first).toString("hex")).toMatch(/^[0-9a-f]{64}$/)
      expect(readdirSync(join(h.home, "server"))).toEqual(["billing.key"])
      const again = yield* resolve(h)
      expect(keyFromSeed(again)).toBe(keyFromSeed(first))
      const id = yield* Effect.promise(() => mandate(["yea", "service-id", "billing"], h.env))
      expect(id.status, id.stderr).toBe(0)
      expect(id.stdout).toBe(`${keyFromSeed(first)}\n`)
    }))

  it.effect("two first runs at once end up with one key: the second link fails and that run reads the first's key", () =>
    Effect.gen(function* () {
      const h = fresh()
      const seeds = yield* Effect.all([resolve(h), resolve(h), resolve(h)], { concurrency: "unbounded" })
      expect(new Set(seeds.map(keyFromSeed)).size).toBe(1)
      expect(readdirSync(join(h.home, "server"))).toEqual(["billing.key"])
    }))

  it.effect("--server-key FILE still wins, and then no key is made in the home", () =>
    Effect.gen(function* () {
      const h = fresh()
      const file = writeSeed(join(h.root, "keys"), "server.key", new Uint8Array(32).fill(7))
      const seed = yield* resolve(h, Option.some(file))
      expect(keyFromSeed(seed)).toBe(keyFromSeed(new Uint8Array(32).fill(7)))
      expect(existsSync(join(h.home, "server"))).toBe(false)
    }))

  it.effect("refuses a key that is a symbolic link (mandate/symlink), even to a good key file", () =>
    Effect.gen(function* () {
      const { h, path } = yield* withKey()
      const elsewhere = writeSeed(join(h.root, "keys"), "other.key", new Uint8Array(32).fill(8))
      rmSync(path)
      symlinkSync(elsewhere, path)
      expect(yield* refusal(h)).toBe(`mandate/symlink ${path}`)
      const r = yield* Effect.promise(() => mandate(["yea", "service-id", "billing"], h.env))
      expect(errorLine(r)).toMatch(new RegExp(`^error: mandate/symlink at ${path}: `))
      // A link to nowhere is refused as a link, not taken as a missing key and replaced.
      rmSync(path)
      symlinkSync(join(h.root, "nowhere.key"), path)
      expect(yield* refusal(h)).toBe(`mandate/symlink ${path}`)
    }))

  it.effect("refuses a key file its group or others can read (mandate/key_permissions)", () =>
    Effect.gen(function* () {
      const { h, path } = yield* withKey()
      for (const m of [0o640, 0o604]) {
        chmodSync(path, m)
        expect(yield* refusal(h)).toBe(`mandate/key_permissions ${path}`)
      }
      const r = yield* Effect.promise(() => mandate(["yea", "service-id", "billing"], h.env))
      expect(errorLine(r)).toBe(`error: mandate/key_permissions at ${path}: key file mode 604 lets others read it; chmod 600`)
    }))

  it.effect("refuses a key folder others can write (mandate/key_permissions)", () =>
    Effect.gen(function* () {
      const { h } = yield* withKey()
      const dir = join(h.home, "server")
      chmodSync(dir, 0o757)
      expect(yield* refusal(h)).toBe(`mandate/key_permissions ${dir}`)
      const r = yield* Effect.promise(() => mandate(["yea", "service-id", "billing"], h.env))
      expect(errorLine(r)).toMatch(new RegExp(`^error: mandate/key_permissions at ${dir}: folder mode 757 lets others write to it`))
    }))

  it.effect("refuses what is not a regular file (mandate/unreadable) and a file over 64 KiB (mandate/bad_key_file)", () =>
    Effect.gen(function* () {
      const { h, path } = yield* withKey()
      rmSync(path)
      // A FIFO would block a plain open: it is refused on its stat, before any open.
      expect(spawnSync("mkfifo", ["-m", "600", path]).status).toBe(0)
      expect(yield* refusal(h)).toBe(`mandate/unreadable ${path}`)
      rmSync(path)
      mkdirSync(path, { mode: 0o700 })
      expect(yield* refusal(h)).toBe(`mandate/unreadable ${path}`)
      rmSync(path, { recursive: true })
      writeFileSync(path, "0".repeat(64) + "\n" + " ".repeat(64 * 1024), { mode: 0o600 })
      expect(yield* refusal(h)).toBe(`mandate/bad_key_file ${path}`)
    }))

  it.effect.runIf(process.getuid?.() === 0)("refuses a key file or folder another user owns (mandate/key_permissions)", () =>
    Effect.gen(function* () {
      const { h, path } = yield* withKey()
      chownSync(path, 4242, 4242)
      expect(yield* refusal(h)).toBe(`mandate/key_permissions ${path}`)
      chownSync(path, 0, 0)
      chownSync(join(h.home, "server"), 4242, 4242)
      expect(yield* refusal(h)).toBe(`mandate/key_permissions ${join(h.home, "server")}`)
    }))

  it("service-id NAME with no such key says so (mandate/no_key); a name with a dot or a slash is a key file", async () => {
    const h = fresh()
    const none = await mandate(["yea", "service-id", "billing"], h.env)
    expect(none.status).toBe(1)
    expect(errorLine(none)).toMatch(new RegExp(`^error: mandate/no_key at ${join(h.home, "server", "billing.key")}: `))
    const file = writeSeed(join(h.root, "keys"), "billing.key", new Uint8Array(32).fill(9))
    const r = await mandate(["yea", "service-id", file], h.env)
    expect(r.stdout).toBe(`${keyFromSeed(new Uint8Array(32).fill(9))}\n`)
  })
})
