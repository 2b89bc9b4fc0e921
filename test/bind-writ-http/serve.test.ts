// `writ serve` (src/app/writ-serve.ts, src/cli/writ-serve.ts): what it refuses to start with, and
// a start that publishes its did:key and endpoint.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { chmodSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { loadHandler, readBindingsFile, readSeedFile, startExecutor } from "../../src/app/writ-serve.js"
import { fetchWellKnown } from "../../src/bind/writ-http/client.js"
import { key, repo, spawnServe, tempDir, writeKeyFile } from "./support.js"

const failureCode = (exit: Exit.Exit<unknown, { code: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.code : "no failure"
const spawnE = (args: ReadonlyArray<string>) => Effect.tryPromise(() => spawnServe(args))

describe("writ serve inputs", () => {
  it.effect("refuses a key file others can read, or one that is not 64 hex digits", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve")
      const open = join(dir, "open.key")
      writeFileSync(open, `${"11".repeat(32)}\n`)
      chmodSync(open, 0o644)
      expect(failureCode(yield* Effect.exit(readSeedFile(open)))).toBe("mandate/key_permissions")
      const bad = join(dir, "bad.key")
      writeFileSync(bad, "not a key\n", { mode: 0o600 })
      chmodSync(bad, 0o600)
      expect(failureCode(yield* Effect.exit(readSeedFile(bad)))).toBe("mandate/bad_key_file")
      const seed = yield* readSeedFile(writeKeyFile(dir, key(31)))
      expect(Buffer.from(seed).toString("hex")).toBe(key(31).hex)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("refuses a bindings file that does not map identities to did:keys", () =>
    Effect.gen(function*() {
      const p = join(tempDir("serve"), "bindings.json")
      writeFileSync(p, JSON.stringify({ "dns:a.example": ["not-a-key"] }))
      expect(failureCode(yield* Effect.exit(readBindingsFile(p)))).toBe("mandate/bad_bindings")
      writeFileSync(p, JSON.stringify({ "dns:a.example": [key(32).did] }))
      expect(yield* readBindingsFile(p)).toEqual({ "dns:a.example": [key(32).did] })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("refuses a handler module that exports no ApplicationService, and a root that is not a did:key", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve")
      const mod = join(dir, "empty.mjs")
      writeFileSync(mod, "export const nothing = 1\n")
      expect(failureCode(yield* Effect.exit(loadHandler(mod)))).toBe("mandate/bad_handler")
      const exit = yield* Effect.exit(startExecutor({
        port: 0, storeFile: join(dir, "s.db"), seedFile: writeKeyFile(dir, key(33)), roots: ["did:key:zNOPE"],
        handlerModule: join(repo, "test/bind-writ-http/fixtures/handler.ts")
      }))
      expect(failureCode(exit)).toBe("mandate/bad_root")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("the CLI exits non-zero with the reason before listening: an open key file, a limit below 1", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve")
      const open = join(dir, "open.key")
      writeFileSync(open, `${"11".repeat(32)}\n`)
      chmodSync(open, 0o644)
      const openKey = yield* Effect.flip(spawnE(["--port", "0", "--store", join(dir, "s.db"), "--key", open, "--root", key(34).did]))
      expect(String(openKey.error)).toMatch(/mandate\/key_permissions/)
      const good = writeKeyFile(dir, key(34))
      const noConnections = yield* Effect.flip(
        spawnE(["--port", "0", "--store", join(dir, "s.db"), "--key", good, "--root", key(34).did, "--max-connections", "0"])
      )
      expect(String(noConnections.error)).toMatch(/mandate\/bad_limit/)
    }), 30_000)

  it.live("publishes its did:key and endpoint at /.well-known/writ", () =>
    Effect.acquireUseRelease(
      Effect.suspend(() => {
        const dir = tempDir("serve")
        return spawnE(["--port", "0", "--store", join(dir, "s.db"), "--key", writeKeyFile(dir, key(35)), "--root", key(36).did, "--act", "travel/"])
      }),
      (s) =>
        Effect.gen(function*() {
          expect(s.did).toBe(key(35).did)
          expect(yield* fetchWellKnown(s.url)).toEqual({ v: 1, did: key(35).did, endpoint: s.url, act: ["travel/"] })
        }),
      (s) => Effect.promise(() => s.kill())
    ), 30_000)
})
