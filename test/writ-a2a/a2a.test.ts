// The A2A binding at the message level, through JSON both ways: a client message (either call
// form) as text, the server's task as text, read back and verified offline against the call.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema, TestClock } from "effect"
import type { JsonObject } from "../../src/kernel/json.js"
import {
  ACK_KEY, callMessage, cancelParams, CardExtension, cardExtension, handleCancel, handleMessage, readCancel, readJson, readMessage,
  Task, TALLY_KEY, verifyTask
} from "../../src/bind/writ-a2a/index.js"
import { messageToV03, partFromV03, partToV03, taskFromV03, taskToV03, V03Task } from "../../src/bind/writ-a2a/v03.js"
import { Executor } from "../../src/writ/executor/executor.js"
import { verifyAck } from "../../src/writ/ack.js"
import { makeCall, makeRevoke } from "../../src/writ/issue.js"
import { ackIdentity, tallyIdentity } from "../../src/writ/sign.js"
import { A, C, EXP, as, keyOf, resign, run, seed, world } from "../writ/fixtures.js"
import { memoryExecutor } from "../writ-approval/executor.js"

const reasonOf = <A, R>(eff: Effect.Effect<A, { reason: string }, R>) =>
  Effect.map(Effect.either(eff), (r) => (Either.isLeft(r) ? r.left.reason : "accept"))

const w = world()
const call = w.call.call.json

/** An executor for C accepting A's roots; its application answers every call with a charge. */
const withExecutor = <A, E>(f: () => Effect.Effect<A, E, Executor>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime((EXP - 3600) * 1000)
    const executor = yield* memoryExecutor(seed(C), [keyOf(A)], {
      perform: () => Effect.succeed({ st: "ok", res: { charge: "ch_1" }, used: { amount: 58900 } })
    })
    return yield* Effect.provideService(f(), Executor, executor)
  })

/** Client -> server -> client, each hop as JSON text. */
const roundTrip = (message: unknown) =>
  Effect.gen(function*() {
    const received = yield* readMessage(JSON.stringify(message))
    const task = yield* handleMessage(received)
    return yield* readJson(Task, JSON.stringify(task), "task")
  })

const mutate = (task: Task, f: (t: { -readonly [K in keyof Task]: unknown }) => void): Task => {
  const copy = JSON.parse(JSON.stringify(task)) as { -readonly [K in keyof Task]: unknown }
  f(copy)
  return copy as Task
}

describe("Writ over A2A (adoption.md 2b)", () => {
  for (const form of ["part", "metadata"] as const) {
    it.scoped(`a call in the ${form} form is answered in the same form and verifies offline`, () =>
      withExecutor(() =>
        Effect.gen(function*() {
          const task = yield* roundTrip(callMessage(call, form, "m-1", "please charge"))
          expect(task.status.state).toBe("TASK_STATE_COMPLETED")
          const last = task.artifacts![task.artifacts!.length - 1]
          if (form === "part") {
            expect(last.parts[0]).toMatchObject({ mediaType: "application/writ-tally+json" })
            expect(last.parts[0]).not.toHaveProperty("kind")
            expect(last.metadata).toBeUndefined()
          } else {
            expect(last.metadata?.[TALLY_KEY]).toBeDefined()
            expect(last.parts.every((p) => p.data === undefined)).toBe(true)
          }
          const v = yield* verifyTask(call, task)
          expect(v.tally.value.st).toBe("ok")
          expect(v.res._tag === "Some" && v.res.value).toEqual({ charge: "ch_1" })
          expect(task.status.message?.metadata?.[TALLY_KEY]).toBe(v.tally.id)
          // A retry of the same message gets the stored tally (section 7 step 9), byte for byte.
          const again = yield* roundTrip(callMessage(call, form, "m-2"))
          expect(JSON.stringify(again.artifacts)).toBe(JSON.stringify(task.artifacts))
        })
      ))
  }

  it.scoped("refuses a message with no call, two calls, a call that is not an object, or that is not strict JSON", () =>
    withExecutor(() =>
      Effect.gen(function*() {
        expect(yield* reasonOf(roundTrip({ messageId: "x", role: "ROLE_USER", parts: [{ text: "hi" }] }))).toBe("missing_call")
        const two = callMessage(call, "part", "x")
        expect(yield* reasonOf(roundTrip({ ...two, parts: [...two.parts, ...two.parts] }))).toBe("malformed")
        const other = run(as(2, 99)(Effect.map(
          makeCall({ chain: w.child.chain, op: "travel/charge", args: w.args }),
          (c) => c.call.json
        )))
        expect(yield* reasonOf(roundTrip({ ...two, metadata: { "io.writ/call": other } }))).toBe("malformed")
        // The same call in both forms is one call.
        expect(yield* reasonOf(roundTrip({ ...two, metadata: { "io.writ/call": call } }))).toBe("accept")
        expect(yield* reasonOf(roundTrip({ messageId: "x", role: "ROLE_USER", parts: [], metadata: { "io.writ/call": "call" } }))).toBe("malformed")
        expect(yield* reasonOf(readMessage('{"messageId":"x","messageId":"x","role":"ROLE_USER","parts":[]}'))).toBe("noncanonical")
        expect(yield* reasonOf(readMessage('{"messageId":"x","role":"ROLE_USER","parts":{}}'))).toBe("malformed")
        expect(yield* reasonOf(readMessage('{"messageId":"x","role":"ROLE_USER","parts":[],"metadata":{"n":1.5}}'))).toBe("noncanonical")
      })
    ))

  it.scoped("a call whose signature does not verify is a rejected task naming its reason (section 7 step 2)", () =>
    withExecutor(() =>
      Effect.gen(function*() {
        const forged = { ...call, args: { ...(call.args as JsonObject), amount: 1 } }
        const task = yield* roundTrip(callMessage(forged, "part", "m"))
        expect(task.status.state).toBe("TASK_STATE_REJECTED")
        expect(task.status.message?.metadata?.["io.writ/error"]).toBe("bad_signature")
        expect(yield* reasonOf(verifyTask(forged, task))).toBe("missing_tally")
        // A refusal after the signature verified is a signed failed tally, which verifies.
        const stranger = resign("call", { ...call, from: keyOf(9) }, 9)
        const refused = yield* roundTrip(callMessage(stranger, "part", "m"))
        expect(refused.status.state).toBe("TASK_STATE_FAILED")
      })
    ))

  it.scoped("the client refuses a task whose tally is missing, whose body or state or status disagrees with it", () =>
    withExecutor(() =>
      Effect.gen(function*() {
        const task = yield* roundTrip(callMessage(call, "part", "m"))
        const n = task.artifacts!.length
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void (t.artifacts = (t.artifacts as Array<unknown>).slice(0, n - 1)))))).toBe("missing_tally")
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void ((t.artifacts as Array<any>)[0].parts[0].data.charge = "ch_2"))))).toBe("tally_mismatch")
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void (t.artifacts = (t.artifacts as Array<unknown>).slice(1)))))).toBe("result_mismatch")
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void ((t.status as any).state = "TASK_STATE_FAILED"))))).toBe("result_mismatch")
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void ((t.status as any).message.metadata = {}))))).toBe("result_mismatch")
        expect(yield* reasonOf(verifyTask(call, mutate(task, (t) => void ((t.artifacts as Array<any>)[n - 1].parts[0].data.acc -= 1))))).toBe("bad_signature")
        // The tally of this call presented for another call.
        const other = resign("call", { ...call, id: "AAAAAAAAAAAAAAAAAAAAAA" }, 2)
        expect(yield* reasonOf(verifyTask(other, task))).toBe("tally_mismatch")
        expect(tallyIdentity((task.artifacts![n - 1].parts[0] as { data: JsonObject }).data)).toBe(task.status.message?.metadata?.[TALLY_KEY])
      })
    ))

  it.scoped("a CancelTask carrying a revoke is recorded (section 9.1) and answered with the executor's ack", () =>
    withExecutor(() =>
      Effect.gen(function*() {
        const revoke = run(as(A)(makeRevoke({ chain: w.root.chain }))).revoke.json
        const params = yield* readCancel(JSON.stringify(cancelParams("task-1", revoke)))
        const task = yield* readJson(Task, JSON.stringify(yield* handleCancel(params)), "task")
        expect(task.status.state).toBe("TASK_STATE_CANCELED")
        const answer = (task.artifacts![0].parts[0] as { data: JsonObject }).data
        const ack = yield* verifyAck(answer.ack)
        expect(ack.value.iss).toBe(keyOf(C))
        expect(task.status.message?.metadata?.[ACK_KEY]).toBe(ackIdentity(answer.ack as JsonObject))
        // A forward call under the revoked writ is refused now.
        const after = yield* roundTrip(callMessage(run(as(2, 98)(Effect.map(
          makeCall({ chain: w.child.chain, op: "travel/charge", args: w.args }),
          (c) => c.call.json
        ))), "part", "m"))
        expect(after.status.state).toBe("TASK_STATE_FAILED")
        expect(yield* reasonOf(handleCancel({ id: "t" }))).toBe("missing_revoke")
        expect(yield* reasonOf(handleCancel({ id: "t", metadata: { "io.writ/revoke": [] } }))).toBe("malformed")
        expect(yield* reasonOf(handleCancel(cancelParams("t", { ...revoke, sig: (revoke.sig as string).replace(/^./, (c) => (c === "A" ? "B" : "A")) })))).toBe("bad_signature")
      })
    ))

  it.scoped("reads a 0.3 message (kind, lower-case role, metadata.mimeType) as 1.0, and writes its task back as 0.3", () =>
    withExecutor(() =>
      Effect.gen(function*() {
        for (const form of ["part", "metadata"] as const) {
          const legacy = messageToV03(callMessage(call, form, "m-3"))
          expect(legacy).toMatchObject({ kind: "message", role: "user" })
          if (form === "part") expect(legacy.parts[0]).toMatchObject({ kind: "data", metadata: { mimeType: "application/writ-call+json" } })
          const received = yield* readMessage(JSON.stringify(legacy), "0.3")
          expect(received.role).toBe("ROLE_USER")
          const task = yield* handleMessage(received)
          const v03 = yield* readJson(V03Task, JSON.stringify(taskToV03(task)), "task")
          expect(v03.status.state).toBe("completed")
          // Read back as 1.0, the task verifies as the one the server built.
          const back = taskFromV03(v03)
          expect(back).toEqual(task)
          expect((yield* verifyTask(call, back)).tally.value.st).toBe("ok")
        }
        // A 1.0 message is not a 0.3 one, nor the reverse.
        expect(yield* reasonOf(readMessage(JSON.stringify(callMessage(call, "part", "m")), "0.3"))).toBe("malformed")
        expect(yield* reasonOf(readMessage(JSON.stringify(messageToV03(callMessage(call, "part", "m")))))).toBe("malformed")
        // A 1.0 part holds exactly one content; a 0.3 file exactly one of uri and bytes.
        expect(yield* reasonOf(readMessage('{"messageId":"x","role":"ROLE_USER","parts":[{"text":"a","data":{}}]}'))).toBe("malformed")
        expect(yield* reasonOf(readMessage('{"kind":"message","messageId":"x","role":"user","parts":[{"kind":"file","file":{}}]}', "0.3"))).toBe("malformed")
        expect(partFromV03({ kind: "file", file: { uri: "https://x/y", mimeType: "text/plain", name: "y" } })).toEqual({ url: "https://x/y", mediaType: "text/plain", filename: "y" })
        expect(partToV03({ data: [1], mediaType: "application/json" })).toEqual({ kind: "data", data: { value: [1] }, metadata: { mimeType: "application/json" } })
      })
    ))

  it("publishes the Agent Card extension entry", () => {
    const entry = cardExtension(keyOf(C), ["amount", "currency"], 6)
    expect(Schema.decodeUnknownSync(CardExtension)(JSON.parse(JSON.stringify(entry)))).toEqual({
      uri: "https://writ.dev/ext/delegation/v1",
      description: "Writ delegation and tally",
      required: false,
      params: { did: keyOf(C), bounds: ["amount", "currency"], maxChain: 6 }
    })
  })
})
