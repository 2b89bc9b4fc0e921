// Held reservations of a dead owner: a worker killed inside a guarded action leaves its reservation
// held (its estimate drawn, its dedup unit taken). `mandate ledger recover` settles them, by owner
// or by age (`--expire-after`), keeping the estimate (the action may have spent it) or, with
// `--release`, giving everything back; every refusal is one line with its reason code.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, it, vi } from "vitest"
import { Reservations } from "../../src/accounting/reservations.js"
import { openLedger, openStores, parseLocation } from "../../src/cli/ledger-open.js"
import { budgetKey, compose, createLedger, dedup, makeGuard, usdBudget, type Usd } from "../../src/ledger/index.js"
import { expectRefused, ledgerCli } from "./cli-harness.js"
import { cost } from "./harness.js"

vi.setConfig({ testTimeout: 300_000 })

const dir = mkdtempSync(join(tmpdir(), "mandate-ledger-recover-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const holder = join(dirname(fileURLToPath(import.meta.url)), "holder.ts")
const mandate = ledgerCli
const refused = expectRefused

/** Starts a holder process and SIGKILLs it once its reservation is recorded. */
const killedHolding = (where: string, owner: string, id: string, usd: string) =>
  new Promise<void>((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", holder, JSON.stringify({ where, owner, id, usd })], { stdio: ["ignore", "pipe", "pipe"] })
    let err = ""
    p.stderr.on("data", (d) => (err += d))
    p.stdout.on("data", (d) => { if (String(d).includes("held")) p.kill("SIGKILL") })
    p.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`holder exited without holding: ${err}`))))
  })

/** Guards one action on the ledger in this process: what it was told. */
const attempt = (where: string, id: string, usd: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const g = yield* makeGuard({ mode: "enforce", policy: compose(usdBudget("1" as Usd), dedup("exact")), namespace: "rec", runId: "run-live", owner: "live" })
    const r = yield* Effect.either(g.guard({ id, kind: "tool", metadata: { job: id }, estimate: cost(0, usd) }, Effect.succeed({ value: 1, actual: cost(0, usd) })))
    return r._tag === "Right" ? "ran" : r.left._tag === "ActionDenied" ? r.left.decision.reason : r.left._tag
  }).pipe(Effect.provide(openLedger(parseLocation(where), { ledger: "rec" }))))

const usedUsd = (where: string) =>
  Effect.runPromise(Effect.flatMap(Reservations, (r) => r.used(budgetKey("rec", "usd", "usd"))).pipe(Effect.provide(openStores(parseLocation(where), { ledger: "rec" }))))

describe("held reservations of a dead owner", () => {
  it("held reservations of a dead owner: `mandate ledger recover` settles a killed worker's reservation, by owner and by expiry", async () => {
    const db = join(dir, "rec.db")
    await Effect.runPromise(Effect.provide(createLedger({ ledger: "rec", mode: "local_full", key: undefined }), openStores(parseLocation(db), { ledger: "rec" })))
    await killedHolding(db, "w-dead", "job-1", "0.60")
    // The dead worker's reservation blocks: the same job is a duplicate in flight, and $0.60 more does not fit.
    expect(await attempt(db, "job-1", "0.30")).toBe("duplicate_action")
    expect(await attempt(db, "job-2", "0.60")).toBe("usd_budget_exhausted")
    expect(await usedUsd(db)).toBe(600_000_000n)

    const other = await mandate("recover", db, "--ledger", "rec", "--owner", "someone-else")
    expect(other.stdout).toContain("recovered 0 held reservations")
    const rec = await mandate("recover", db, "--ledger", "rec", "--owner", "w-dead")
    expect(rec.status, rec.stderr).toBe(0)
    expect(rec.stdout).toContain("recovered 1 held reservation (estimates kept")
    // The estimate stays spent (conservative), the dedup unit is given back: the job may run again.
    expect(await usedUsd(db)).toBe(600_000_000n)
    expect(await attempt(db, "job-1", "0.30")).toBe("ran")
    expect(await usedUsd(db)).toBe(900_000_000n)

    // Expiry, whoever the owner, and --release: a second dead worker's $0.10 comes back.
    await killedHolding(db, "w-dead-2", "job-3", "0.10")
    expect(await usedUsd(db)).toBe(1_000_000_000n)
    const expired = await mandate("recover", db, "--ledger", "rec", "--expire-after", "0", "--release")
    expect(expired.status, expired.stderr).toBe(0)
    expect(expired.stdout).toContain("recovered 1 held reservation (released)")
    expect(await usedUsd(db)).toBe(900_000_000n)
    // Nothing is settled twice.
    expect((await mandate("recover", db, "--ledger", "rec", "--expire-after", "0")).stdout).toContain("recovered 0 held reservations")
    const verify = await mandate("verify", db, "--ledger", "rec")
    expect(verify.status, verify.stderr).toBe(0)
  })

  it("held reservations of a dead owner: recover refuses no scope, a negative expiry and a missing ledger, creating nothing", async () => {
    const db = join(dir, "rec2.db")
    await Effect.runPromise(Effect.provide(createLedger({ ledger: "rec", mode: "local_full", key: undefined }), openStores(parseLocation(db), { ledger: "rec" })))
    refused(await mandate("recover", db, "--ledger", "rec"), "invalid_argument")
    refused(await mandate("recover", db, "--ledger", "rec", "--expire-after", "-5"), "invalid_argument")
    const missing = join(dir, "nope.db")
    refused(await mandate("recover", missing, "--owner", "w"), "ledger_missing")
    expect(existsSync(missing)).toBe(false)
  })

  it("held reservations of a dead owner: expiry on a safe_telemetry ledger is refused (its lines name no reservation), by owner it runs", async () => {
    const db = join(dir, "rec3.db")
    const init = await mandate("init", db, "--ledger", "rec", "--mode", "safe_telemetry")
    expect(init.status, init.stderr).toBe(0)
    refused(await mandate("recover", db, "--ledger", "rec", "--expire-after", "0"), "mode_mismatch")
    const byOwner = await mandate("recover", db, "--ledger", "rec", "--owner", "w")
    expect(byOwner.status, byOwner.stderr).toBe(0)
    expect(byOwner.stdout).toContain("recovered 0 held reservations")
  })
})
