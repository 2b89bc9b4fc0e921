// The JSON-RPC side of the A2A agent endpoint (src/bind/writ-a2a/rpc.ts), in process: each
// version answered in its own shapes, and every refusal a JSON-RPC error whose ErrorInfo names the
// reason; and the client's reading of Agent Cards and errors (http-client.ts).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema, TestClock } from "effect"
import { peerOfCard } from "../../src/bind/writ-a2a/http-client.js"
import { agentCard } from "../../src/bind/writ-a2a/http.js"
import { callMessage, cancelParams, verifyTask } from "../../src/bind/writ-a2a/client.js"
import { A2aTasks, handleRpc, RPC_CODES } from "../../src/bind/writ-a2a/rpc.js"
import { AgentCard, SendMessageResponse } from "../../src/bind/writ-a2a/schema.js"
import { messageToV03, taskFromV03, V03Task } from "../../src/bind/writ-a2a/v03.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Executor } from "../../src/writ/executor/executor.js"
import { makeRevoke } from "../../src/writ/issue.js"
import { A, C, EXP, as, keyOf, run, seed, world } from "../writ/fixtures.js"
import { memoryExecutor } from "../writ-approval/executor.js"

const w = world()
const call = w.call.call.json

const withEndpoint = <A, E>(f: () => Effect.Effect<A, E, Executor | A2aTasks>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime((EXP - 3600) * 1000)
    const executor = yield* memoryExecutor(seed(C), [keyOf(A)], {
      perform: () => Effect.succeed({ st: "ok", res: { charge: "ch_1" }, used: { amount: 58900 } })
    })
    return yield* f().pipe(Effect.provideService(Executor, executor), Effect.provide(A2aTasks.memory(2)))
  })

const rpc = (body: unknown) => Effect.map(handleRpc(typeof body === "string" ? body : JSON.stringify(body)), (r) => r as JsonObject & { result?: unknown; error?: { code: number; message: string; data: Array<JsonObject> } })
const request = (method: string, params: unknown, id: number | string = 1) => ({ jsonrpc: "2.0", id, method, params })
const errorOf = (r: { error?: { code: number; data: Array<JsonObject> } }) => ({ code: r.error?.code, reason: r.error?.data[0].reason })

describe("the A2A endpoint's JSON-RPC (A2A 1.0, 0.3 read)", () => {
  it.scoped("SendMessage answers {task} in 1.0 shapes; message/send answers the task in 0.3 shapes; GetTask and tasks/get find it", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        const v10 = yield* rpc(request("SendMessage", { message: callMessage(call, "part", "m-1") }, "a"))
        expect(v10.id).toBe("a")
        const { task } = Schema.decodeUnknownSync(SendMessageResponse)(v10.result) as { task: Parameters<typeof verifyTask>[1] }
        expect(task.status.state).toBe("TASK_STATE_COMPLETED")
        expect(JSON.stringify(v10.result)).not.toMatch(/"kind"/)
        expect((yield* verifyTask(call, task)).tally.value.st).toBe("ok")
        const v03 = yield* rpc(request("message/send", { message: messageToV03(callMessage(call, "part", "m-2")) }))
        const legacy = Schema.decodeUnknownSync(V03Task)(v03.result)
        expect(legacy.status.state).toBe("completed")
        expect(taskFromV03(legacy)).toEqual(task)
        expect((yield* rpc(request("GetTask", { id: task.id }))).result).toEqual(task)
        expect((yield* rpc(request("tasks/get", { id: task.id }))).result).toEqual(v03.result)
      })
    ))

  it.scoped("refuses what is not strict JSON, not JSON-RPC, an unknown method and malformed params, each naming its reason", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        expect(errorOf(yield* rpc('{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}'))).toEqual({ code: RPC_CODES.parseError, reason: "noncanonical" })
        expect(errorOf(yield* rpc("not json"))).toEqual({ code: RPC_CODES.parseError, reason: "noncanonical" })
        expect(errorOf(yield* rpc({ jsonrpc: "1.0", id: 1, method: "SendMessage" }))).toEqual({ code: RPC_CODES.invalidRequest, reason: "mandate/a2a_bad_request" })
        expect(errorOf(yield* rpc({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: [] }))).toEqual({ code: RPC_CODES.invalidRequest, reason: "mandate/a2a_bad_request" })
        expect(errorOf(yield* rpc(request("GetExtendedAgentCard", {})))).toEqual({ code: RPC_CODES.methodNotFound, reason: "mandate/a2a_unknown_method" })
        // The methods added for A2A 1.0 are not 0.3's: a 0.3 method name for them is unknown.
        expect(errorOf(yield* rpc(request("tasks/resubscribe", { id: "x" })))).toEqual({ code: RPC_CODES.methodNotFound, reason: "mandate/a2a_unknown_method" })
        expect(errorOf(yield* rpc(request("SendMessage", { message: { messageId: "x" } })))).toEqual({ code: RPC_CODES.invalidParams, reason: "malformed" })
        // A 0.3 message under a 1.0 method (and the reverse) is malformed: the method names the version.
        expect(errorOf(yield* rpc(request("SendMessage", { message: messageToV03(callMessage(call, "part", "m")) })))).toEqual({ code: RPC_CODES.invalidParams, reason: "malformed" })
        expect(errorOf(yield* rpc(request("message/send", { message: callMessage(call, "part", "m") })))).toEqual({ code: RPC_CODES.invalidParams, reason: "malformed" })
        const none = yield* rpc(request("SendMessage", { message: { messageId: "x", role: "ROLE_USER", parts: [{ text: "hi" }] } }))
        expect(errorOf(none)).toEqual({ code: RPC_CODES.invalidParams, reason: "missing_call" })
        expect(none.error?.message).toMatch(/^missing_call at message: /)
        expect(errorOf(yield* rpc(request("GetTask", { id: "nope" })))).toEqual({ code: RPC_CODES.taskNotFound, reason: "mandate/a2a_task_not_found" })
      })
    ))

  it.scoped("CancelTask: a revoke is recorded; without one a known task is not cancelable and an unknown one not found", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        const sent = yield* rpc(request("SendMessage", { message: callMessage(call, "part", "m-1") }))
        const id = (sent.result as { task: { id: string } }).task.id
        expect(errorOf(yield* rpc(request("CancelTask", { id })))).toEqual({ code: RPC_CODES.taskNotCancelable, reason: "mandate/a2a_not_cancelable" })
        expect(errorOf(yield* rpc(request("tasks/cancel", { id: "nope" })))).toEqual({ code: RPC_CODES.taskNotFound, reason: "mandate/a2a_task_not_found" })
        const revoke = run(as(A)(makeRevoke({ chain: w.root.chain }))).revoke.json
        expect(errorOf(yield* rpc(request("CancelTask", cancelParams(id, { ...revoke, iat: 1 }))))).toEqual({ code: RPC_CODES.invalidParams, reason: "bad_signature" })
        const canceled = yield* rpc(request("tasks/cancel", cancelParams(id, revoke)))
        expect((canceled.result as { kind: string; status: { state: string } })).toMatchObject({ kind: "task", status: { state: "canceled" } })
        // The log keeps the latest tasks only (2 here): the first is forgotten after two more.
        yield* rpc(request("SendMessage", { message: { ...callMessage(call, "part", "m-3"), taskId: "t-3" } }))
        yield* rpc(request("SendMessage", { message: { ...callMessage(call, "part", "m-4"), taskId: "t-4" } }))
        expect(errorOf(yield* rpc(request("GetTask", { id })))).toEqual({ code: RPC_CODES.taskNotFound, reason: "mandate/a2a_task_not_found" })
      })
    ))
})

describe("the client's reading of an Agent Card", () => {
  const pick = (card: unknown, transport?: "jsonrpc" | "rest") =>
    Effect.runSync(Effect.either(Effect.flatMap(Schema.decodeUnknown(AgentCard)(card), (c) => peerOfCard(c, transport))))
  it("takes the card's first 1.0 interface of JSON-RPC or HTTP+JSON, then JSON-RPC at 0.3, then a 0.3 card's url; or the binding asked for; refuses a card with none", () => {
    const ours = agentCard(keyOf(C), { url: "http://127.0.0.1:1/a2a" })
    expect(pick(ours)).toEqual(Either.right({ url: "http://127.0.0.1:1/a2a", version: "1.0", transport: "jsonrpc" }))
    expect(pick(ours, "rest")).toEqual(Either.right({ url: "http://127.0.0.1:1/a2a", version: "1.0", transport: "rest" }))
    const restFirst = {
      name: "x",
      supportedInterfaces: [{ url: "http://r", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }, { url: "http://j", protocolBinding: "JSONRPC", protocolVersion: "1.0" }]
    }
    expect(pick(restFirst)).toEqual(Either.right({ url: "http://r", version: "1.0", transport: "rest" }))
    expect(pick(restFirst, "jsonrpc")).toEqual(Either.right({ url: "http://j", version: "1.0", transport: "jsonrpc" }))
    expect(pick({ name: "x", supportedInterfaces: [{ url: "http://b", protocolBinding: "JSONRPC", protocolVersion: "0.3" }] })).toEqual(Either.right({ url: "http://b", version: "0.3", transport: "jsonrpc" }))
    expect(pick({ name: "x", url: "http://c", protocolVersion: "0.3.0" })).toEqual(Either.right({ url: "http://c", version: "0.3", transport: "jsonrpc" }))
    // HTTP+JSON at 0.3 (its paths differ) is not spoken: asked for REST, a 0.3 card has none.
    const rest03 = pick({ name: "x", url: "http://c", protocolVersion: "0.3.0", supportedInterfaces: [{ url: "http://f", protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }] }, "rest")
    expect(Either.isLeft(rest03) && (rest03.left as { reason: string }).reason).toBe("mandate/a2a_no_interface")
    const none = pick({ name: "x", supportedInterfaces: [{ url: "http://d", protocolBinding: "GRPC", protocolVersion: "1.0" }] })
    expect(Either.isLeft(none) && (none.left as { reason: string }).reason).toBe("mandate/a2a_no_interface")
    expect(pick({ name: "x", url: "http://e", preferredTransport: "GRPC" })._tag).toBe("Left")
  })
})


