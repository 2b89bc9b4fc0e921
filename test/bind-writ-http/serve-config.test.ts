// `startExecutor` (src/app/writ-serve.ts) given no cache size sizes its verification cache through
// Config (VerificationCache.layerConfig, MANDATE_VERIFICATION_CACHE_BYTES): a value that is not a
// byte count is the start's typed failure `mandate/bad_config`, before any store is opened.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { startExecutor } from "../../src/app/writ-serve.js"
import { key, repo, tempDir, writeKeyFile } from "./support.js"

const failure = (exit: Exit.Exit<unknown, { code: string; message: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? `${exit.cause.error.code}: ${exit.cause.error.message}` : "no failure"

describe("writ serve: the verification cache's size from the environment", () => {
  it.scoped("a MANDATE_VERIFICATION_CACHE_BYTES that is not a byte count fails mandate/bad_config", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve-config")
      const storeFile = join(dir, "s.db")
      const options = {
        port: 0, host: "127.0.0.1", storeFile, seedFile: writeKeyFile(dir, key(61)), roots: [key(62).did],
        handlerModule: join(repo, "test/bind-writ-http/fixtures/handler.ts")
      }
      for (const bad of ["-1", "lots"]) {
        const exit = yield* Effect.exit(startExecutor(options).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MANDATE_VERIFICATION_CACHE_BYTES", bad]])))
        ))
        expect(failure(exit)).toMatch(/^mandate\/bad_config: MANDATE_VERIFICATION_CACHE_BYTES/)
      }
      expect(existsSync(storeFile)).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)
})
