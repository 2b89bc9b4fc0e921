// `mandate yea openapi --sqlite FILE` killed with SIGKILL between the upstream's answer and the
// receipt: the counting upstream answers the write and kills the service the moment its answer is
// handed to the socket. Restarted on the same file, the proposal's claim names the killed instance,
// so every re-COMMIT answers the recorded outcome (the receipt, if it was written in time, else
// `conflict`: outcome unknown) and nothing is sent upstream again.
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
import { startCountingUpstream } from "./counting-upstream.js"

const start = (base: string, db: string) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const args = ["--import", "tsx", join(repoRoot, "src/cli/main.ts"), "yea", "openapi", join(import.meta.dirname, "fixtures", "notes.json"), "--base", base, "--port", "0", "--id", "notes.example", "--trust", principalKey, "--sqlite", db]
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`yea openapi did not start: ${err}`))), 120_000)
    child.once("exit", () => (clearTimeout(timer), reject(new Error(`yea openapi exited: ${err}`))))
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      const m = /serving notes\.example \(4 capabilities\) at (\S+)/.exec(err)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ child, url: m[1] })
      }
    })
  })
const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("close", () => resolve())))

const agentLayer = Layer.merge(Signer.fromSeed(AGENT), RandomBytes.live)
const grant = issue([{ svc: ["notes.example"] }])
const agentAt = (url: string) =>
  Effect.gen(function* () {
    const agent = yield* makeClient(yield* connectTcp(new URL(url), { timeoutMs: 60_000 }), { grants: [grant] }).pipe(Effect.provide(agentLayer))
    yield* agent.hello()
    return agent
  })
const shape = (r: FinalReply) => (r.kind === "RECEIPT" ? `RECEIPT ${r.receipt.id}${r.replay === true ? " replay" : ""}` : r.kind === "ERROR" ? `ERROR ${r.code}` : r.kind)

describe("YEA: a proposal runs at most once", () => {
  it.live("SIGKILL between the upstream's answer and the receipt: after restart, re-COMMIT sends nothing", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "yea-openapi-kill-"))
      const db = join(dir, "notes.db")
      const up = yield* Effect.promise(startCountingUpstream)
      const first = yield* Effect.promise(() => start(up.base, db))
      try {
        up.state.afterAnswer = () => void first.child.kill("SIGKILL")
        const proposal = yield* Effect.scoped(
          Effect.gen(function* () {
            const agent = yield* agentAt(first.url)
            const ps = yield* agent.intent("notes.create_note", { body: { text: "once" } })
            if (ps.kind !== "PROPOSALS") throw new Error(shape(ps))
            yield* Effect.either(agent.commit(ps.proposals[0]))
            return ps.proposals[0]
          })
        )
        yield* Effect.promise(() => exited(first.child))
        up.state.afterAnswer = undefined
        expect(up.writes).toEqual(["POST /api/notes"])
        const second = yield* Effect.promise(() => start(up.base, db))
        try {
          yield* Effect.scoped(
            Effect.gen(function* () {
              const agent = yield* agentAt(second.url)
              const replies: Array<FinalReply> = []
              for (let i = 0; i < 3; i++) replies.push(yield* agent.commit(proposal))
              expect(up.writes).toEqual(["POST /api/notes"])
              const shapes = new Set(replies.map(shape))
              expect(shapes.size, [...shapes].join(" | ")).toBe(1)
              expect([...shapes][0]).toMatch(/^(RECEIPT \S+ replay|ERROR conflict)$/)
              // The restarted service still sends a new proposal's write, once.
              const next = yield* agent.intent("notes.create_note", { body: { text: "after" } })
              if (next.kind !== "PROPOSALS") throw new Error(shape(next))
              expect((yield* agent.commit(next.proposals[0])).kind).toBe("RECEIPT")
              expect(up.writes).toHaveLength(2)
              console.log(`killed commit after restart: ${[...shapes][0]}`)
            })
          )
        } finally {
          second.child.kill("SIGKILL")
          yield* Effect.promise(() => exited(second.child))
        }
      } finally {
        first.child.kill("SIGKILL")
        yield* Effect.promise(up.close)
        rmSync(dir, { recursive: true, force: true })
      }
    }), 400_000)
})
