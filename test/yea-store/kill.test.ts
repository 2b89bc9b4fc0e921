// The service is killed with SIGKILL between COMMIT and receipt (as soon as
// the commit's EVENT arrives, before or just after the receipt is written), restarted on the same
// SQLite file, and the COMMIT replayed: every answer is the original receipt (`replay: true`) or
// the refusal of an interrupted commit (`conflict`), never a fresh receipt, so never two effects.
// A proposal made before the kill is still there after it and commits once.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connectTcp } from "../../src/bind/yea-tcp/client.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import type { FinalReply } from "../../src/yea/frame.js"
import { repoRoot } from "../support/shared.js"
import { AGENT, issue, principalKey } from "../yea/_helpers.js"
import { cliEntry } from "../support/cli.js"

const start = (db: string) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry, "yea", "serve", "shop", "--port", "0", "--sqlite", db, "--trust", principalKey], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`serve did not start: ${err}`))), 120_000)
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      const m = /serving \S+ at (yea:\/\/\S+)/.exec(err)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ child, url: m[1] })
      }
    })
  })
const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("close", () => resolve())))

const order = (sku: string) => ({ items: [{ sku, qty: 1 }], deliver: "2026-12-24" })
const agentLayer = Layer.merge(Signer.fromSeed(AGENT), RandomBytes.live)
const grant = issue([{ svc: ["shop.example"] }])

describe("SIGKILL between COMMIT and receipt (SQLite)", () => {
  it.live("after restart the replay answers the original receipt or none, never a second effect", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "yea-kill-"))
      const db = join(dir, "shop.db")
      const first = yield* Effect.promise(() => start(db))
      try {
        const before = yield* Effect.scoped(
          Effect.gen(function* () {
            const agent = yield* makeClient(yield* connectTcp(new URL(first.url), { timeoutMs: 60_000 }), { grants: [grant] }).pipe(Effect.provide(agentLayer))
            yield* agent.hello()
            const a = yield* agent.intent("shop.order", order("m01"))
            const b = yield* agent.intent("shop.order", order("m02"))
            if (a.kind !== "PROPOSALS" || b.kind !== "PROPOSALS") throw new Error("no proposals")
            // Kill the service the moment the commit reports progress from inside its handler.
            const seen = yield* Effect.either(
              agent.commit(a.proposals[0], { onEvent: () => Effect.sync(() => void first.child.kill("SIGKILL")) })
            )
            return { killed: a.proposals[0], later: b.proposals[0], seen }
          })
        )
        yield* Effect.promise(() => exited(first.child))
        const sawReceipt = before.seen._tag === "Right" && before.seen.right.kind === "RECEIPT" ? before.seen.right : undefined
        const second = yield* Effect.promise(() => start(db))
        try {
          yield* Effect.scoped(
            Effect.gen(function* () {
              const agent = yield* makeClient(yield* connectTcp(new URL(second.url), { timeoutMs: 60_000 }), { grants: [grant] }).pipe(Effect.provide(agentLayer))
              yield* agent.hello()
              const replies: Array<FinalReply> = []
              for (let i = 0; i < 5; i++) replies.push(yield* agent.commit(before.killed))
              const shapes = new Set(replies.map((r) => (r.kind === "RECEIPT" ? `RECEIPT ${r.receipt.id} replay=${r.replay}` : r.kind === "ERROR" ? `ERROR ${r.code}` : r.kind)))
              // One answer, every time: the original receipt replayed, or "interrupted" (conflict).
              expect(shapes.size, [...shapes].join(" | ")).toBe(1)
              const only = replies[0]
              if (only.kind === "RECEIPT") {
                expect(only.replay).toBe(true)
                if (sawReceipt !== undefined && sawReceipt.kind === "RECEIPT") expect(only.receipt.id).toBe(sawReceipt.receipt.id)
              } else {
                expect(only.kind === "ERROR" && only.code).toBe("conflict")
                expect(sawReceipt).toBeUndefined()
              }
              // The proposal made before the kill survived it and commits, once.
              const later = yield* agent.commit(before.later)
              expect(later.kind === "RECEIPT" && later.replay === undefined).toBe(true)
              const again = yield* agent.commit(before.later)
              expect(again.kind === "RECEIPT" && again.replay === true).toBe(true)
              console.log(`killed commit after restart: ${[...shapes][0]}`)
            })
          )
        } finally {
          second.child.kill("SIGKILL")
          yield* Effect.promise(() => exited(second.child))
        }
      } finally {
        first.child.kill("SIGKILL")
        rmSync(dir, { recursive: true, force: true })
      }
    }), 400_000)
})
