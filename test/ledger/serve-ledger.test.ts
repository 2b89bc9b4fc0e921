// `writ serve --ledger` and the demos' `--ledger`: what they refuse, each with
// its reason code, and a served executor recording its decisions in the ledger it was given.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { startExecutor } from "../../src/app/writ-serve.js"
import { openStores, parseLocation } from "../../src/app/ledger-open.js"
import { postWrit } from "../../src/bind/writ-http/client.js"
import { LedgerStore, readLedger, verifyLedger } from "../../src/ledger/index.js"
import { key, repo, tempDir, writeKeyFile } from "../bind-writ-http/support.js"
import { runMandate } from "../support/cli.js"
import { act, call, writ, key as fixtureKey } from "../writ-executor/fixtures.js"

const failure = (exit: Exit.Exit<unknown, { code: string; message: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? `${exit.cause.error.code}: ${exit.cause.error.message}` : "no failure"
const handler = join(repo, "test/bind-writ-http/fixtures/handler.ts")

describe("writ serve --ledger", () => {
  it.scoped("refuses the store file as its ledger, and a ledger that cannot be opened", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve-ledger")
      const seedFile = writeKeyFile(dir, key(41))
      const base = { port: 0, host: "127.0.0.1", storeFile: join(dir, "s.db"), seedFile, roots: [key(42).did], handlerModule: handler }
      expect(failure(yield* Effect.exit(startExecutor({ ...base, ledger: join(dir, "s.db") })))).toMatch(/^mandate\/bad_ledger: /)
      mkdirSync(join(dir, "a-directory"))
      expect(failure(yield* Effect.exit(startExecutor({ ...base, ledger: join(dir, "a-directory") })))).toMatch(/^mandate\/ledger_unavailable: /)
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)

  it.scoped("records each call's decision in the ledger, which verifies", () =>
    Effect.gen(function*() {
      const dir = tempDir("serve-ledger")
      const A = fixtureKey(51)
      const B = fixtureKey(52)
      const E = key(53)
      const ledger = join(dir, "ledger.db")
      const running = yield* startExecutor({
        port: 0, host: "127.0.0.1", storeFile: join(dir, "s.db"), seedFile: writeKeyFile(dir, key(53)),
        roots: [A.did], handlerModule: handler, ledger, rootLifetimeSeconds: null
      })
      const w1 = writ(A, B, { act: act("travel") }, null, 4_000_000_000)
      const w2 = writ(B, E, { act: act("travel") }, w1, 4_000_000_000)
      yield* postWrit(running.url, call(B, [w1, w2], "travel/book"))
      yield* postWrit(running.url, call(B, [w1, w2], "other/op"))
      const lines = yield* Effect.provide(
        Effect.flatMap(LedgerStore, (s) => Effect.zip(Stream.runCollect(readLedger(s.lines)), verifyLedger(s.lines, undefined))),
        openStores(parseLocation(ledger))
      )
      const decisions = Array.from(lines[0]).flatMap((e) => (e.type === "protocol" ? [[e.decision.kind, e.decision.operation, e.decision.reason ?? null]] : []))
      expect(decisions).toEqual([["accepted", "travel/book", null], ["refused", "other/op", "forbidden_op"]])
    }).pipe(Effect.provide(NodeContext.layer)), 60_000)
})

describe("the demos' --ledger", () => {
  it("fails with one line naming mandate/ledger_unavailable and the location", async () => {
    const dir = tempDir("demo-ledger")
    mkdirSync(join(dir, "a-directory"))
    const r = await runMandate(["yea", "demo", "--ledger", join(dir, "a-directory")], 120_000, "SIGKILL")
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(new RegExp(`^error: mandate/ledger_unavailable at ${join(dir, "a-directory")}: `))
    const w = await runMandate(["demo", "--out", join(dir, "out"), "--ledger", join(dir, "a-directory")], 120_000, "SIGKILL")
    expect(w.status).toBe(1)
    expect(w.stderr).toMatch(/^error: mandate\/ledger_unavailable at /)
  }, 240_000)
})
