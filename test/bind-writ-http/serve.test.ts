// `writ serve` (src/app/writ-serve.ts, src/cli/writ-serve.ts): what it refuses to start
// with, and a start on a bindings file whose peer is then named over mTLS.
import { NodeContext } from "@effect/platform-node"
import { Effect, Exit } from "effect"
import { chmodSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fetchWellKnown } from "../../src/bind/writ-http/client.js"
import { loadHandler, readBindingsFile, readSeedFile, startExecutor } from "../../src/app/writ-serve.js"
import { key, repo, spawnServe, tempDir, writeKeyFile } from "./support.js"

const run = <A, E>(self: Effect.Effect<A, E, NodeContext.NodeContext>) => Effect.runPromiseExit(self.pipe(Effect.provide(NodeContext.layer)))
const failureCode = (exit: Exit.Exit<unknown, { code: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.code : "no failure"

describe("writ serve inputs", () => {
  it("refuses a key file others can read, or one that is not 64 hex digits", async () => {
    const dir = tempDir("serve")
    const open = join(dir, "open.key")
    writeFileSync(open, `${"11".repeat(32)}\n`)
    chmodSync(open, 0o644)
    expect(failureCode(await run(readSeedFile(open)))).toBe("mandate/key_permissions")
    const bad = join(dir, "bad.key")
    writeFileSync(bad, "not a key\n", { mode: 0o600 })
    chmodSync(bad, 0o600)
    expect(failureCode(await run(readSeedFile(bad)))).toBe("mandate/bad_key_file")
    const good = writeKeyFile(dir, key(31))
    const seed = await Effect.runPromise(readSeedFile(good).pipe(Effect.provide(NodeContext.layer)))
    expect(Buffer.from(seed).toString("hex")).toBe(key(31).hex)
  })

  it("refuses a bindings file that does not map identities to did:keys", async () => {
    const dir = tempDir("serve")
    const p = join(dir, "bindings.json")
    writeFileSync(p, JSON.stringify({ "dns:a.example": ["not-a-key"] }))
    expect(failureCode(await run(readBindingsFile(p)))).toBe("mandate/bad_bindings")
    writeFileSync(p, JSON.stringify({ "dns:a.example": [key(32).did] }))
    const ok = await Effect.runPromise(readBindingsFile(p).pipe(Effect.provide(NodeContext.layer)))
    expect(ok).toEqual({ "dns:a.example": [key(32).did] })
  })

  it("refuses a handler module that exports no ApplicationService, and a root that is not a did:key", async () => {
    const dir = tempDir("serve")
    const mod = join(dir, "empty.mjs")
    writeFileSync(mod, "export const nothing = 1\n")
    expect(failureCode(await Effect.runPromiseExit(loadHandler(mod)))).toBe("mandate/bad_handler")
    const exit = await run(Effect.scoped(startExecutor({
      port: 0, storeFile: join(dir, "s.db"), seedFile: writeKeyFile(dir, key(33)), roots: ["did:key:zNOPE"],
      handlerModule: join(repo, "test/bind-writ-http/fixtures/handler.ts")
    })))
    expect(failureCode(exit)).toBe("mandate/bad_root")
  })

  it("the CLI exits non-zero with the reason before listening", async () => {
    const dir = tempDir("serve")
    const open = join(dir, "open.key")
    writeFileSync(open, `${"11".repeat(32)}\n`)
    chmodSync(open, 0o644)
    await expect(spawnServe(["--port", "0", "--store", join(dir, "s.db"), "--key", open, "--root", key(34).did]))
      .rejects.toThrow(/mandate\/key_permissions/)
  }, 30_000)

  it("publishes its did:key and endpoint at /.well-known/writ", async () => {
    const dir = tempDir("serve")
    const s = await spawnServe(["--port", "0", "--store", join(dir, "s.db"), "--key", writeKeyFile(dir, key(35)), "--root", key(36).did, "--act", "travel/"])
    try {
      expect(s.did).toBe(key(35).did)
      const doc = await Effect.runPromise(fetchWellKnown(s.url))
      expect(doc).toEqual({ v: 1, did: key(35).did, endpoint: s.url, act: ["travel/"] })
    } finally {
      await s.kill()
    }
  }, 30_000)
})
