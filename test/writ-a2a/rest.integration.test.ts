// Writ over A2A's HTTP+JSON (REST) binding against the A2A JavaScript SDK 1.3, both directions, on
// real loopback HTTP:
//   - the SDK's REST client (its `RestTransport`, chosen over the card's preferred JSON-RPC) against
//     `mandate writ a2a-serve` run as a process: a call, the task's tally verified offline, the
//     stream, `GetTask`, a signed refusal's code, the refusals as the SDK's error classes with the
//     SDK's HTTP statuses, and a revoke through cancel (in the `writ-revoke` header, since the SDK's
//     REST `cancelTask` sends no body); `mandate writ a2a-send --transport rest` too;
//   - Mandate's REST client against a server built with the SDK's REST handler (`restHandler`),
//     whose cancel reaches the executor with the revoke only through `revokeThroughCancel`.
import { Message as SdkMessage, Role, Task as SdkTask, TaskState } from "@a2a-js/sdk"
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client"
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server"
import { agentCardHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import { Effect, Either } from "effect"
import express from "express"
import type { ChildProcess } from "node:child_process"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyTask } from "../../src/bind/writ-a2a/client.js"
import { resolvePeer, sendCall, sendRevoke } from "../../src/bind/writ-a2a/http-client.js"
import { revokeHeader } from "../../src/bind/writ-a2a/rest-client.js"
import { ACK_KEY } from "../../src/bind/writ-a2a/schema.js"
import { revokeThroughCancel, type SdkCodec, writAgentExecutor } from "../../src/bind/writ-a2a/sdk.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyAck } from "../../src/writ/ack.js"
import { ackIdentity } from "../../src/writ/sign.js"
import { runCli } from "../support/cli.js"
import { at, executorRuntime, fromSdk, http, reasonOf, run, spawnA2aServe, stop, world } from "./sdk-world.js"

const message = (messageId: string, call: JsonObject | undefined): SdkMessage => ({
  messageId,
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts: call === undefined
    ? [{ content: { $case: "text", value: "please charge" }, mediaType: "text/plain", filename: "", metadata: undefined }]
    : [{ content: { $case: "data", value: call }, mediaType: "application/writ-call+json", filename: "", metadata: undefined }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})
const send = (messageId: string, call: JsonObject | undefined) => ({ tenant: "", message: message(messageId, call), configuration: undefined, metadata: undefined })

/** What an SDK call rejected with: its error class, HTTP status and message. */
const rejection = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    const err = e as { name: string; statusCode?: number; message: string }
    return { name: err.name, status: err.statusCode, message: err.message }
  }
  throw new Error("expected a rejection")
}

describe("the A2A SDK 1.3 REST client against mandate writ a2a-serve", () => {
  let child: ChildProcess | undefined
  let base = ""
  let w: Awaited<ReturnType<typeof world>>

  beforeAll(async () => {
    w = await world("r-")
    const started = await spawnA2aServe(w, "r-")
    child = started.child
    base = started.base
  }, 120_000)

  afterAll(() => stop(child))

  it("a call over HTTP+JSON verifies; stream and GetTask; a signed refusal's code; the refusals as the SDK's errors; revoke through cancel", async () => {
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ["HTTP+JSON"] })
    const client = await new ClientFactory(options).createFromUrl(base)
    expect(client.transport.protocolName).toBe("HTTP+JSON")

    const result = await client.sendMessage(send("m-1", w.calls.one))
    expect("status" in result).toBe(true)
    const task = result as SdkTask
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const verified = await run(verifyTask(w.calls.one, fromSdk(task)))
    expect(Either.isRight(verified) && verified.right.tally.value.st).toBe("ok")
    expect(Either.isRight(verified) && verified.right.res).toMatchObject({ value: { amount: 58900, currency: "USD" } })

    // The stream is one event, the final task (a replay of the same call: the same tally).
    const events: Array<{ payload?: { $case: string; value: SdkTask } }> = []
    for await (const event of client.sendMessageStream(send("m-1s", w.calls.one))) events.push(event as (typeof events)[number])
    expect(events.map((e) => e.payload?.$case)).toEqual(["task"])
    expect(fromSdk(events[0].payload!.value).artifacts).toEqual(fromSdk(task).artifacts)
    expect(SdkTask.toJSON(await client.getTask({ tenant: "", id: task.id, historyLength: undefined }))).toEqual(SdkTask.toJSON(task))

    // Out of uses: a failed task whose signed tally names the code, verified by the client.
    await client.sendMessage(send("m-2a", w.calls.first))
    const over = (await client.sendMessage(send("m-2", w.calls.over))) as SdkTask
    expect(over.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    const overV = await run(verifyTask(w.calls.over, fromSdk(over)))
    expect(Either.isRight(overV) && overV.right.tally.value.err?.code).toBe("count_exhausted")

    // Refusals reach the SDK as its error classes, with the statuses it expects, naming the reason.
    expect(await rejection(client.sendMessage(send("m-3", undefined)))).toMatchObject({ name: "RequestMalformedError", status: 400, message: expect.stringMatching(/^missing_call/) })
    expect(await rejection(client.getTask({ tenant: "", id: "nope", historyLength: undefined }))).toMatchObject({ name: "TaskNotFoundError", status: 404 })
    expect(await rejection(client.cancelTask({ tenant: "", id: "nope", metadata: undefined }))).toMatchObject({ name: "TaskNotFoundError", status: 404 })
    expect(await rejection(client.cancelTask({ tenant: "", id: task.id, metadata: undefined }))).toMatchObject({
      name: "TaskNotCancelableError", status: 400, message: expect.stringMatching(/^mandate\/a2a_not_cancelable/)
    })
    // The card says pushNotifications false: the SDK client refuses a push config by itself.
    await expect(async () => client.createTaskPushNotificationConfig({
      tenant: "", id: "c", taskId: task.id, url: "http://127.0.0.1:9/hook", token: "", authentication: undefined
    })).rejects.toThrow(/not supported/)

    // The SDK's REST cancel sends no body: the revoke rides in the `writ-revoke` service parameter.
    const forged = { ...w.revoke, sig: `${(w.revoke.sig as string).startsWith("A") ? "B" : "A"}${(w.revoke.sig as string).slice(1)}` }
    expect(await rejection(client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, { serviceParameters: revokeHeader(forged) }))).toMatchObject({
      name: "RequestMalformedError", status: 400, message: expect.stringMatching(/^bad_signature/)
    })
    expect(await rejection(client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, { serviceParameters: { "writ-revoke": "not base64url!" } }))).toMatchObject({
      status: 400, message: expect.stringMatching(/^malformed at header\.writ-revoke/)
    })
    const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, { serviceParameters: revokeHeader(w.revoke) })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const answer = canceled.artifacts[0].parts[0].content as { $case: string; value: JsonObject }
    expect(answer.$case).toBe("data")
    const checked = await run(verifyAck(answer.value.ack as JsonObject))
    expect(Either.isRight(checked) && checked.right.value.iss).toBe(w.C)
    expect(canceled.status?.message?.metadata?.[ACK_KEY]).toBe(ackIdentity(answer.value.ack as JsonObject))
    // Under the revoked grant, a call is refused (signed), the code reaching the client.
    const after = (await client.sendMessage(send("m-4", w.calls.after))) as SdkTask
    const afterV = await run(verifyTask(w.calls.after, fromSdk(after)))
    expect(Either.isRight(afterV) && afterV.right.tally.value.err?.code).toBe("revoked")
  }, 60_000)

  it("the endpoint's own HTTP+JSON refusals: an unknown path, a wrong method, a body naming another task, two different revokes, push configs, a body that is not strict JSON", async () => {
    const unknown = await fetch(`${base}/a2a/elsewhere`, { headers: { accept: "application/json" } })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { details: Array<{ reason: string }> } }).error.details.map((d) => d.reason)).toEqual(["mandate/a2a_unknown_method"])
    const wrong = await fetch(`${base}/a2a/message:send`)
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("POST")
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}/a2a${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
        .then(async (r) => ({ status: r.status, body: (await r.json()) as { error: { message: string } } }))
    const other = await post("/tasks/t1:cancel", { id: "t2", metadata: { "io.writ/revoke": w.revokeOther } })
    expect(other.status).toBe(400)
    expect(other.body.error.message).toMatch(/^malformed at body\.id/)
    const two = await post("/tasks/t1:cancel", { metadata: { "io.writ/revoke": w.revokeOther } }, revokeHeader(w.revoke))
    expect(two.body.error.message).toMatch(/^malformed at header\.writ-revoke: a different revoke/)
    // A push config (which the SDK client does not send to a card without pushNotifications).
    const push = await post("/tasks/t1/pushNotificationConfigs", { url: "http://127.0.0.1:9/hook" })
    expect(push.status).toBe(400)
    expect((push.body.error as unknown as { details: Array<{ reason: string }> }).details.map((d) => d.reason)).toEqual(["PUSH_NOTIFICATION_NOT_SUPPORTED", "mandate/a2a_push_not_supported"])
    const bad = await fetch(`${base}/a2a/message:send`, { method: "POST", headers: { "content-type": "application/json" }, body: "{\"message\":1.5}" })
    expect(bad.status).toBe(400)
  }, 60_000)

  it("mandate writ a2a-send --transport rest: the call verifies, and the revoke is acknowledged", async () => {
    const sent = await runCli(["writ", "a2a-send", base, at("r-two.json"), "--transport", "rest"])
    expect(sent.stderr).toBe("")
    expect(sent.stdout).toMatch(/^A2A 1\.0 HTTP\+JSON at http:\/\/127\.0\.0\.1:\d+\/a2a\n/)
    expect(sent.stdout).toMatch(/tally ok\n/)
    expect(sent.stdout).toMatch(/verdict: valid/)
    const revoked = await runCli(["writ", "a2a-send", base, at("r-revoke-other.json"), "--transport", "rest", "--task", "any"])
    expect(revoked.stdout).toMatch(/task any TASK_STATE_CANCELED\nack from .*: valid/)
    const old = await runCli(["writ", "a2a-send", base, at("r-two.json"), "--transport", "rest", "--protocol", "0.3"])
    expect(old.status).toBe(1)
    expect(old.stderr).toMatch(/^error: mandate\/usage .*--transport rest speaks A2A 1\.0 only/)
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

describe("Mandate's REST client against a server built with the A2A SDK 1.3's REST handler", () => {
  it("the call verifies; the SDK's own cancel never sees the revoke; through revokeThroughCancel the executor records it", async () => {
    const w = await world("rs-")
    const runtime = executorRuntime(w)
    const codec: SdkCodec<SdkMessage, SdkTask, ReturnType<typeof AgentEvent.task>> = {
      version: "1.0",
      messageToJson: (m) => SdkMessage.toJSON(m),
      taskFromJson: (j) => SdkTask.fromJSON(j),
      taskEvent: (t) => AgentEvent.task(t)
    }
    const card = {
      name: "writ-sdk-rest", description: "SDK 1.3 REST server with Writ", version: "1.0.0",
      supportedInterfaces: [] as Array<{ url: string; protocolBinding: string; tenant: string; protocolVersion: string }>,
      provider: undefined, capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      securitySchemes: {}, securityRequirements: [], defaultInputModes: ["application/json"], defaultOutputModes: ["application/json"], skills: [], signatures: []
    }
    const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), writAgentExecutor(codec, runtime.runPromise))
    const handler = revokeThroughCancel(inner, codec as SdkCodec, runtime.runPromise)
    const app = express()
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }))
    app.use("/rest", restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
    app.use("/plain", restHandler({ requestHandler: inner, userBuilder: UserBuilder.noAuthentication }))
    const base = await listen(app)
    card.supportedInterfaces.push({ url: `${base}/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" })

    const peer = await run(Effect.provide(resolvePeer(base), http))
    expect(Either.isRight(peer) && peer.right).toEqual({ url: `${base}/rest`, version: "1.0", transport: "rest" })
    if (Either.isLeft(peer)) return
    // No JSON-RPC interface on this card: asking for it is refused.
    expect(reasonOf(await run(Effect.provide(resolvePeer(base, "jsonrpc"), http)))).toBe("mandate/a2a_no_interface")
    for (const form of ["part", "metadata"] as const) {
      const sent = await run(Effect.provide(sendCall(peer.right, form === "part" ? w.calls.one : w.calls.two, form), http))
      expect(Either.isRight(sent) && sent.right.verified.tally.value.st).toBe("ok")
    }
    // The SDK's REST handler as it comes: its cancel drops the revoke (task not found, 404).
    const unpassed = await run(Effect.provide(sendRevoke({ ...peer.right, url: `${base}/plain` }, "any-task", w.revoke), http))
    expect(reasonOf(unpassed)).toBe("mandate/a2a_rpc_error")
    expect(Either.isLeft(unpassed) && unpassed.left.message).toMatch(/^404: /)
    // A forged revoke is refused and cancels nothing; the real one is recorded.
    const forged = await run(Effect.provide(sendRevoke(peer.right, "t", { ...w.revoke, iat: 1 }), http))
    expect(reasonOf(forged)).toBe("mandate/a2a_rpc_error")
    const revoked = await run(Effect.provide(sendRevoke(peer.right, "any-task", w.revoke), http))
    expect(Either.isRight(revoked) && revoked.right.ack.value.iss).toBe(w.C)
    expect(Either.isRight(revoked) && revoked.right.task.status.state).toBe("TASK_STATE_CANCELED")
    const after = await run(Effect.provide(sendCall(peer.right, w.calls.after), http))
    expect(Either.isRight(after) && after.right.verified.tally.value.err?.code).toBe("revoked")
    // A message with no call: the SDK server answers a rejected task, which the client refuses.
    expect(reasonOf(await run(Effect.provide(sendCall(peer.right, {}), http)))).toBe("missing_tally")
    await runtime.dispose()
  }, 60_000)
})
