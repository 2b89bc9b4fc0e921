// The file binding: a call handed over beside the work in a shared folder, executed by an
// executor that reads the folder, its tally written beside the work and verified by the delegator.
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  callFile, errorFile, executeBeside, executeFolder, handOver, readTallyBeside, tallyFile, workDigest
} from "../../src/bind/writ-file/index.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Executor } from "../../src/writ/executor/executor.js"
import { makeCall } from "../../src/writ/issue.js"
import { A, B, C, EXP, as, keyOf, resign, run, seed, world } from "../writ/fixtures.js"
import { memoryExecutor } from "../writ-approval/executor.js"

const reasonOf = <A, R>(eff: Effect.Effect<A, { reason: string }, R>) =>
  Effect.map(Effect.either(eff), (r) => (Either.isLeft(r) ? r.left.reason : "accept"))

const w = world()
const callWith = (extra: JsonObject, n: number) => run(as(B, n)(makeCall({ chain: w.child.chain, op: "travel/charge", args: { ...w.args, ...extra } }))).call.json

/** A folder, an executor for C whose application counts what it performs, both in scope. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime((EXP - 3600) * 1000)
  const performed: Array<string> = []
  const executor = yield* memoryExecutor(seed(C), [keyOf(A)], {
    perform: (op) => Effect.sync(() => (performed.push(op.callId), { st: "ok", res: { charged: 58900 }, used: { amount: 58900 } }))
  })
  const dir = mkdtempSync(join(tmpdir(), "mandate-files-"))
  return { executor, dir, performed }
})

const run2 = <A, E>(eff: Effect.Effect<A, E, Executor | import("@effect/platform").FileSystem.FileSystem>, executor: Executor["Type"]) =>
  eff.pipe(Effect.provideService(Executor, executor), Effect.provide(NodeContext.layer))

describe("the file binding (a call and its tally beside the work)", () => {
  it.scoped("hands a call over, executes it once, and the delegator verifies the tally beside the work", () =>
    Effect.gen(function*() {
      const { executor, dir, performed } = yield* setup
      const work = join(dir, "invoice-7.pdf")
      writeFileSync(work, "the work")
      const call = callWith({ work_sha256: yield* run2(workDigest(work), executor) }, 1)
      yield* run2(handOver(work, call), executor)
      expect(JSON.parse(readFileSync(callFile(work), "utf8"))).toEqual(call)
      // Handing the same call over again is a no-op; another call is refused.
      yield* run2(handOver(work, call), executor)
      expect(yield* reasonOf(run2(handOver(work, callWith({}, 2)), executor))).toBe("file/exists")
      // Before the executor ran: no tally.
      expect(yield* reasonOf(run2(readTallyBeside(work), executor))).toBe("missing_tally")
      const done = yield* run2(executeFolder(dir), executor)
      expect(done.map((d) => d.work)).toEqual([work])
      expect(performed).toHaveLength(1)
      const v = yield* run2(readTallyBeside(work), executor)
      expect(v.tally.value.st).toBe("ok")
      expect(v.tally.value.used).toEqual({ amount: 58900 })
      // A second pass finds nothing left to do, and runs nothing.
      expect(yield* run2(executeFolder(dir), executor)).toEqual([])
      expect(performed).toHaveLength(1)
      // A tally file changed after signing, or a result body changed, is refused.
      const answer = JSON.parse(readFileSync(tallyFile(work), "utf8")) as { tally: JsonObject; res: JsonObject }
      writeFileSync(tallyFile(work), JSON.stringify({ ...answer, res: { charged: 1 } }))
      expect(yield* reasonOf(run2(readTallyBeside(work), executor))).toBe("tally_mismatch")
      writeFileSync(tallyFile(work), JSON.stringify({ ...answer, tally: { ...answer.tally, acc: (answer.tally.acc as number) - 1 } }))
      expect(yield* reasonOf(run2(readTallyBeside(work), executor))).toBe("bad_signature")
    }))

  it.scoped("does not run a call whose work changed, nor one whose signature fails; each leaves its reason beside the work", () =>
    Effect.gen(function*() {
      const { executor, dir, performed } = yield* setup
      const work = join(dir, "report.txt")
      writeFileSync(work, "version 1")
      const call = callWith({ work_sha256: yield* run2(workDigest(work), executor) }, 3)
      yield* run2(handOver(work, call), executor)
      writeFileSync(work, "version 2")
      expect(yield* reasonOf(run2(executeBeside(work), executor))).toBe("file/work_changed")
      expect(JSON.parse(readFileSync(errorFile(work), "utf8"))).toEqual({ error: "file/work_changed" })
      expect(yield* reasonOf(run2(readTallyBeside(work), executor))).toBe("file/work_changed")
      const forged = join(dir, "forged.txt")
      writeFileSync(forged, "x")
      writeFileSync(callFile(forged), JSON.stringify({ ...callWith({}, 4), op: "travel/charge/more" }))
      const a = yield* run2(executeBeside(forged), executor)
      expect(a._tag).toBe("error")
      expect(JSON.parse(readFileSync(errorFile(forged), "utf8"))).toEqual({ error: "bad_signature" })
      expect(existsSync(tallyFile(forged))).toBe(false)
      // A call signed by a stranger verifies its signature: a signed refusal is the tally.
      const stranger = join(dir, "stranger.txt")
      writeFileSync(stranger, "x")
      writeFileSync(callFile(stranger), JSON.stringify(resign("call", { ...callWith({}, 5), from: keyOf(9) }, 9)))
      yield* run2(executeBeside(stranger), executor)
      const t = JSON.parse(readFileSync(tallyFile(stranger), "utf8")) as { tally: JsonObject }
      expect(t.tally.st).toBe("failed")
      // Not strict JSON (a repeated member): refused unsigned, as section 1.1 says.
      const dup = join(dir, "dup.txt")
      writeFileSync(callFile(dup), '{"v":1,"v":1}')
      yield* run2(executeBeside(dup), executor)
      expect(JSON.parse(readFileSync(errorFile(dup), "utf8"))).toEqual({ error: "noncanonical" })
      expect(performed).toHaveLength(0)
      expect(yield* reasonOf(run2(executeBeside(join(dir, "absent")), executor))).toBe("missing_call")
      // A call "file" that is a folder, and one over the size limit, are refused before reading.
      mkdirSync(callFile(join(dir, "folder")))
      expect(yield* reasonOf(run2(executeBeside(join(dir, "folder")), executor))).toBe("file/unreadable")
      writeFileSync(callFile(join(dir, "big")), " ".repeat((1 << 20) + 1))
      expect(yield* reasonOf(run2(executeBeside(join(dir, "big")), executor))).toBe("too_large")
      // A tally file that is not a JSON object, beside a call: refused when read.
      writeFileSync(tallyFile(stranger), "[]")
      expect(yield* reasonOf(run2(readTallyBeside(stranger), executor))).toBe("malformed")
    }))

  it.scoped("a folder pass is bounded: at most `max` items per pass, the rest on the next", () =>
    Effect.gen(function*() {
      const { executor, dir, performed } = yield* setup
      for (let i = 0; i < 3; i++) {
        const work = join(dir, `item-${i}`)
        writeFileSync(work, `item ${i}`)
        yield* run2(handOver(work, callWith({ item: i, spend: 1000 }, 10 + i)), executor)
      }
      expect((yield* run2(executeFolder(dir, 2), executor)).map((d) => d.work)).toEqual([join(dir, "item-0"), join(dir, "item-1")])
      expect((yield* run2(executeFolder(dir, 2), executor)).map((d) => d.work)).toEqual([join(dir, "item-2")])
      expect(yield* run2(executeFolder(dir, 2), executor)).toEqual([])
      expect(performed).toHaveLength(3)
    }))
})
