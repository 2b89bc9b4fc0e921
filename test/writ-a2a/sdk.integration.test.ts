// Writ over A2A against the A2A JavaScript SDK, both directions, on real loopback HTTP:
//   - the SDK's clients (`@a2a-js/sdk` 1.3, which speaks A2A 1.0, and `a2a-sdk-v03`, the 0.3.14
//     SDK) against `mandate writ a2a-serve` run as a process: a call in a data part, the task with
//     its tally verified offline, `GetTask`, a revoke through `CancelTask`, and the refusals;
//   - Mandate's client (src/bind/writ-a2a/http-client.ts) against servers built with each SDK
//     (DefaultRequestHandler, its Express handlers, `writAgentExecutor`), whose `CancelTask`
//     passes a revoke to the executor through `revokeThroughCancel`.
import { ClientFactory } from "@a2a-js/sdk/client"
import { Message as SdkMessage, Role, Task as SdkTask, TaskState, verifyAgentCardSignature } from "@a2a-js/sdk"
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import { ClientFactory as ClientFactoryV03 } from "a2a-sdk-v03/client"
import { DefaultRequestHandler as DefaultRequestHandlerV03, InMemoryTaskStore as InMemoryTaskStoreV03 } from "a2a-sdk-v03/server"
import { A2AExpressApp } from "a2a-sdk-v03/server/express"
import { Effect, Either, Option, Schema } from "effect"
import express from "express"
import type { ChildProcess } from "node:child_process"
import type { AddressInfo } from "node:net"
import type { Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolvePeer, sendCall, sendRevoke } from "../../src/bind/writ-a2a/http-client.js"
import { verifyTask } from "../../src/bind/writ-a2a/client.js"
import { ACK_KEY } from "../../src/bind/writ-a2a/schema.js"
import { revokeThroughCancel, type SdkCodec, writAgentExecutor } from "../../src/bind/writ-a2a/sdk.js"
import { taskFromV03, V03Task } from "../../src/bind/writ-a2a/v03.js"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import { publicKeyFromDidKey } from "../../src/kernel/didkey.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyAck } from "../../src/writ/ack.js"
import { ackIdentity } from "../../src/writ/sign.js"
import { executorRuntime, fromSdk, http, reasonOf, run, spawnA2aServe, stop, world } from "./sdk-world.js"

describe("the A2A SDK's clients against mandate writ a2a-serve", () => {
  let child: ChildProcess
  let base = ""
  let w: Awaited<ReturnType<typeof world>>

  beforeAll(async () => {
    w = await world("s-")
    const started = await spawnA2aServe(w, "s-")
    child = started.child
    expect(started.did).toBe(w.C)
    base = started.base
  }, 120_000)

  afterAll(() => stop(child))

  it("@a2a-js/sdk 1.3 verifies the Agent Card a2a-serve signs with the executor's key (A2A 1.0 section 8.4)", async () => {
    const client = await new ClientFactory().createFromUrl(base)
    const keys: Array<string> = []
    const verifier = verifyAgentCardSignature(async (kid) => {
      keys.push(kid)
      return { kty: "OKP", crv: "Ed25519", x: encodeBase64url(Option.getOrThrow(publicKeyFromDidKey(kid))) }
    })
    const card = await client.getAgentCard(undefined, verifier)
    expect(card.signatures.length).toBe(1)
    expect(keys).toEqual([w.C])
    // Mandate's own client verified it too.
    expect((await Effect.runPromise(Effect.provide(resolvePeer(base, undefined, true), http))).signedBy).toBe(w.C)
  })

  it("@a2a-js/sdk 1.3 (A2A 1.0): a call in a data part comes back as a task whose tally verifies; GetTask; revoke through CancelTask", async () => {
    const client = await new ClientFactory().createFromUrl(base)
    expect(client.protocolVersion).toBe("1.0")
    const message = (messageId: string, call: JsonObject | undefined): SdkMessage => ({
      messageId,
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [
        { content: { $case: "text", value: "please charge" }, mediaType: "text/plain", filename: "", metadata: undefined },
        ...(call === undefined ? [] : [{ content: { $case: "data" as const, value: call }, mediaType: "application/writ-call+json", filename: "", metadata: undefined }])
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: []
    })
    const result = await client.sendMessage({ tenant: "", message: message("m-1", w.calls.one), configuration: undefined, metadata: undefined })
    expect("status" in result).toBe(true)
    const sdkTask = result as SdkTask
    expect(sdkTask.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    // The tally is the last artifact, of the tally media type; it verifies offline against the call.
    const last = sdkTask.artifacts[sdkTask.artifacts.length - 1]
    expect(last.parts[0].mediaType).toBe("application/writ-tally+json")
    const verified = await run(verifyTask(w.calls.one, fromSdk(sdkTask)))
    expect(Either.isRight(verified) && verified.right.tally.value.st).toBe("ok")
    expect(Either.isRight(verified) && verified.right.res).toMatchObject({ value: { amount: 58900, currency: "USD" } })

    // Streamed, the same message is one event: the final task, with the same tally (a replay).
    const events: Array<unknown> = []
    for await (const event of client.sendMessageStream({ tenant: "", message: message("m-1s", w.calls.one), configuration: undefined, metadata: undefined })) events.push(event)
    expect(events.length).toBe(1)
    const event = events[0] as { payload?: { $case: string; value: SdkTask } }
    expect(event.payload?.$case).toBe("task")
    const streamed = event.payload!.value
    expect(streamed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(fromSdk(streamed).artifacts).toEqual(fromSdk(sdkTask).artifacts)
    expect(Either.isRight(await run(verifyTask(w.calls.one, fromSdk(streamed))))).toBe(true)

    // GetTask returns the same task.
    const got = await client.getTask({ tenant: "", id: sdkTask.id, historyLength: undefined })
    expect(SdkTask.toJSON(got)).toEqual(SdkTask.toJSON(sdkTask))

    // A use the grant no longer has: a signed refusal, a failed task that still verifies.
    await client.sendMessage({ tenant: "", message: message("m-1b", w.calls.first), configuration: undefined, metadata: undefined })
    const over = (await client.sendMessage({ tenant: "", message: message("m-2", w.calls.over), configuration: undefined, metadata: undefined })) as SdkTask
    expect(over.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(Either.isRight(await run(verifyTask(w.calls.over, fromSdk(over))))).toBe(true)

    // No call: a JSON-RPC error naming missing_call, which the SDK raises.
    await expect(client.sendMessage({ tenant: "", message: message("m-3", undefined), configuration: undefined, metadata: undefined })).rejects.toThrow(/missing_call/)
    // A cancel without a revoke cannot cancel a final task; an unknown task is not found.
    await expect(client.cancelTask({ tenant: "", id: sdkTask.id, metadata: undefined })).rejects.toThrow(/a2a_not_cancelable/)
    await expect(client.cancelTask({ tenant: "", id: "nope", metadata: undefined })).rejects.toThrow(/a2a_task_not_found/)
    // A forged revoke is refused with its reason and cancels nothing.
    const forged = { ...w.revoke, sig: `${(w.revoke.sig as string).startsWith("A") ? "B" : "A"}${(w.revoke.sig as string).slice(1)}` }
    await expect(client.cancelTask({ tenant: "", id: sdkTask.id, metadata: { "io.writ/revoke": forged } })).rejects.toThrow(/bad_signature/)

    // The revoke through CancelTask: recorded, the task canceled, naming the executor's ack.
    const canceled = await client.cancelTask({ tenant: "", id: sdkTask.id, metadata: { "io.writ/revoke": w.revoke } })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const answer = canceled.artifacts[0].parts[0].content
    expect(answer?.$case).toBe("data")
    const ack = (answer as { value: JsonObject }).value.ack as JsonObject
    const checked = await run(verifyAck(ack))
    expect(Either.isRight(checked) && checked.right.value.iss).toBe(w.C)
    expect(canceled.status?.message?.metadata?.[ACK_KEY]).toBe(ackIdentity(ack))
    // A call under the revoked grant is refused now (signed).
    const after = (await client.sendMessage({ tenant: "", message: message("m-4", w.calls.after), configuration: undefined, metadata: undefined })) as SdkTask
    expect(after.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    const afterV = await run(verifyTask(w.calls.after, fromSdk(after)))
    expect(Either.isRight(afterV) && afterV.right.tally.value.err?.code).toBe("revoked")
  }, 60_000)

  it("a2a-sdk-v03 (A2A 0.3): the same card and endpoint answer in 0.3 shapes, and the task verifies", async () => {
    const client = await new ClientFactoryV03().createFromUrl(base)
    const result = await client.sendMessage({
      message: { kind: "message", messageId: "m-03", role: "user", parts: [{ kind: "data", data: w.calls.two, metadata: { mimeType: "application/writ-call+json" } }] }
    })
    expect(result.kind).toBe("task")
    if (result.kind !== "task") return
    expect(result.status.state).toBe("completed")
    const last = result.artifacts![result.artifacts!.length - 1]
    expect(last.parts[0]).toMatchObject({ kind: "data", metadata: { mimeType: "application/writ-tally+json" } })
    const task = taskFromV03(Schema.decodeUnknownSync(V03Task)(result))
    const verified = await run(verifyTask(w.calls.two, task))
    expect(Either.isRight(verified) && verified.right.tally.value.st).toBe("ok")
    const got = await client.getTask({ id: result.id })
    expect(got).toEqual(result)
    const events: Array<unknown> = []
    for await (const event of client.sendMessageStream({
      message: { kind: "message", messageId: "m-03s", role: "user", parts: [{ kind: "data", data: w.calls.two, metadata: { mimeType: "application/writ-call+json" } }] }
    })) events.push(event)
    expect(events).toEqual([result])
    // A revoke through tasks/cancel, answered in 0.3 with the executor's ack.
    const canceled = await client.cancelTask({ id: result.id, metadata: { "io.writ/revoke": w.revokeOther } })
    expect(canceled.kind).toBe("task")
    expect(canceled.status.state).toBe("canceled")
    const answer = canceled.artifacts![0].parts[0]
    expect(answer).toMatchObject({ kind: "data", metadata: { mimeType: "application/writ+json" } })
    const ack = (answer as { data: JsonObject }).data.ack as JsonObject
    const checked = await run(verifyAck(ack))
    expect(Either.isRight(checked) && checked.right.value.iss).toBe(w.C)
    expect(canceled.status.message?.metadata?.[ACK_KEY]).toBe(ackIdentity(ack))
  }, 60_000)
})

/** An SDK server on loopback, closed after the tests. */
const servers: Array<Server> = []
const listen = (app: express.Express) =>
  new Promise<string>((resolve) => {
    const server = app.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
    servers.push(server)
  })
afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve))
})

describe("Mandate's A2A client against servers built with the A2A SDK", () => {
  it("@a2a-js/sdk 1.3 server: the call verifies, and its CancelTask passes the revoke to the executor", async () => {
    const w = await world("v1-")
    const runtime = executorRuntime(w)
    const codec: SdkCodec<SdkMessage, SdkTask, ReturnType<typeof AgentEvent.task>> = {
      version: "1.0",
      messageToJson: (m) => SdkMessage.toJSON(m),
      taskFromJson: (j) => SdkTask.fromJSON(j),
      taskEvent: (t) => AgentEvent.task(t)
    }
    const card = {
      name: "writ-sdk-1", description: "SDK 1.3 server with Writ", version: "1.0.0",
      supportedInterfaces: [] as Array<{ url: string; protocolBinding: string; tenant: string; protocolVersion: string }>,
      provider: undefined, capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      securitySchemes: {}, securityRequirements: [], defaultInputModes: ["application/json"], defaultOutputModes: ["application/json"], skills: [], signatures: []
    }
    const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), writAgentExecutor(codec, runtime.runPromise))
    const handler = revokeThroughCancel(inner, codec as SdkCodec, runtime.runPromise)
    const app = express()
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }))
    app.use("/a2a", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
    // The SDK's handler as it comes: its CancelTask never reaches the executor with the revoke.
    app.use("/plain", jsonRpcHandler({ requestHandler: inner, userBuilder: UserBuilder.noAuthentication }))
    const base = await listen(app)
    card.supportedInterfaces.push({ url: `${base}/a2a`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" })

    const peer = await run(Effect.provide(resolvePeer(base), http))
    expect(Either.isRight(peer) && peer.right).toEqual({ url: `${base}/a2a`, version: "1.0", transport: "jsonrpc" })
    if (Either.isLeft(peer)) return
    for (const form of ["part", "metadata"] as const) {
      const sent = await run(Effect.provide(sendCall(peer.right, form === "part" ? w.calls.one : w.calls.two, form), http))
      expect(Either.isRight(sent) && sent.right.task.status.state).toBe("TASK_STATE_COMPLETED")
      expect(Either.isRight(sent) && sent.right.verified.tally.value.st).toBe("ok")
    }
    // The SDK's own cancel refuses a final task; with a revoke, the executor records it.
    const plain = await fetch(`${base}/a2a`, {
      method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "CancelTask", params: { id: "unknown" } })
    }).then((r) => r.json() as Promise<{ error?: { code: number } }>)
    expect(plain.error?.code).toBe(-32001)
    const unpassed = await run(Effect.provide(sendRevoke({ url: `${base}/plain`, version: "1.0" }, "any-task", w.revoke), http))
    expect(reasonOf(unpassed)).toBe("mandate/a2a_rpc_error")
    const revoked = await run(Effect.provide(sendRevoke(peer.right, "any-task", w.revoke), http))
    expect(Either.isRight(revoked) && revoked.right.ack.value.iss).toBe(w.C)
    expect(Either.isRight(revoked) && revoked.right.task.status.state).toBe("TASK_STATE_CANCELED")
    // The executor behind the SDK server now refuses calls under the revoked grant (signed).
    const after = await run(Effect.provide(sendCall(peer.right, w.calls.after), http))
    expect(Either.isRight(after) && after.right.verified.tally.value.err?.code).toBe("revoked")
    // A message with no call is a rejected task naming the reason; the client refuses it.
    const none = await run(Effect.provide(sendCall(peer.right, {}), http))
    expect(reasonOf(none)).toBe("missing_tally")
    // A forged revoke comes back as an error and cancels nothing.
    const forged = await run(Effect.provide(sendRevoke(peer.right, "t", { ...w.revoke, iat: 1 }), http))
    expect(reasonOf(forged)).toBe("mandate/a2a_rpc_error")
    await runtime.dispose()
  }, 60_000)

  it("a2a-sdk-v03 server: Mandate speaks 0.3 to a 0.3 card, the call verifies, and tasks/cancel passes the revoke", async () => {
    const w = await world("v03-")
    const runtime = executorRuntime(w)
    const codec: SdkCodec = { version: "0.3", messageToJson: (m) => m, taskFromJson: (j) => j }
    const inner = new DefaultRequestHandlerV03({
      name: "writ-sdk-03", description: "SDK 0.3 server with Writ", version: "1.0.0", protocolVersion: "0.3.0", url: "",
      capabilities: { streaming: false }, defaultInputModes: ["application/json"], defaultOutputModes: ["application/json"], skills: []
    }, new InMemoryTaskStoreV03(), writAgentExecutor(codec, runtime.runPromise))
    const handler = revokeThroughCancel(inner, codec, runtime.runPromise)
    const app = new A2AExpressApp(handler).setupRoutes(express())
    const base = await listen(app)
    ;(await inner.getAgentCard()).url = `${base}/`

    const peer = await run(Effect.provide(resolvePeer(base), http))
    expect(Either.isRight(peer) && peer.right.version).toBe("0.3")
    if (Either.isLeft(peer)) return
    const sent = await run(Effect.provide(sendCall(peer.right, w.calls.one), http))
    expect(Either.isRight(sent) && sent.right.verified.tally.value.st).toBe("ok")
    const revoked = await run(Effect.provide(sendRevoke(peer.right, Either.isRight(sent) ? sent.right.task.id : "t", w.revoke), http))
    expect(Either.isRight(revoked) && revoked.right.ack.value.iss).toBe(w.C)
    const after = await run(Effect.provide(sendCall(peer.right, w.calls.after), http))
    expect(Either.isRight(after) && after.right.verified.tally.value.err?.code).toBe("revoked")
    await runtime.dispose()
  }, 60_000)
})
