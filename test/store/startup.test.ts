// A store that `writ serve` cannot open or read at startup is named in
// the error, in the documented form `error: mandate/store_unavailable at <path>: <why>`.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describeServeError, ServeError, startExecutor } from "../../src/app/writ-serve.js"
import { key, repo, spawnServe, tempDir, writeKeyFile } from "../bind-writ-http/support.js"

describe("startup errors about the store name the file", () => {
  it.scopedLive("a store file that is not a database: mandate/store_unavailable at <path>", () =>
    Effect.gen(function*() {
      const dir = tempDir("store-startup")
      const storeFile = join(dir, "not-a-store.sqlite")
      writeFileSync(storeFile, "this is not a SQLite database, not at all; ".repeat(200))
      const exit = yield* Effect.exit(startExecutor({
        port: 0, storeFile, seedFile: writeKeyFile(dir, key(41)), roots: [key(42).did],
        handlerModule: join(repo, "test/bind-writ-http/fixtures/handler.ts")
      }).pipe(Effect.provide(NodeContext.layer)))
      const e = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(e).toBeInstanceOf(ServeError)
      expect(describeServeError(e!)).toMatch(new RegExp(`^mandate/store_unavailable at ${storeFile}: .*not a database`))
    }))

  it.live("the CLI prints it in the documented form and exits non-zero before listening", () =>
    Effect.gen(function*() {
      const dir = tempDir("store-startup")
      const storeFile = join(dir, "no-such-folder", "s.sqlite")
      const started = yield* Effect.either(Effect.tryPromise(() =>
        spawnServe(["--port", "0", "--store", storeFile, "--key", writeKeyFile(dir, key(43)), "--root", key(44).did])
      ))
      expect(started._tag).toBe("Left")
      if (started._tag === "Left") {
        expect(String(started.left.cause)).toContain(`error: mandate/store_unavailable at ${storeFile}: `)
      }
    }))
})
