// A2A 1.0's task methods past SendMessage, driven by the A2A JavaScript SDK 1.3 (its JSON-RPC and
// HTTP+JSON clients) against `mandate writ a2a-serve --push-allow` run as a process, with a local
// webhook server that counts every request it gets:
//   - ListTasks: newest change first, cursor pages, filters, artifacts only when asked, bad params;
//   - SubscribeToTask: a held call's task as it works (two subscribers, one per binding), its
//     artifacts and terminal status when a revoke stops it; a final task and an unknown one refused;
//   - push notification configs: create, get, list, delete (idempotent), a URL off the allow list
//     refused with no request made to it, unknown tasks and configs, malformed params; the POST of
//     the task to the webhook at each change of state (a config in SendMessage's configuration, and
//     one created on a finished task that a revoke then cancels);
//   - without --push-allow, every push method is refused (the card says pushNotifications false);
//   - a flood of subscribers, bounded by the listener's per-peer connection cap.
import { Message as SdkMessage, Role, type Task as SdkTask, TaskState } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import Http from "node:http"
import type { AddressInfo } from "node:net"
import { plainExecutor } from "../../src/app/plain-executor.js"
import { listenA2a } from "../../src/bind/writ-a2a/http.js"
import { A2aPush, A2aWebhook, allowedUrl, MAX_CONFIGS_PER_TASK, parseAllowList } from "../../src/bind/writ-a2a/push.js"
import { revokeHeader } from "../../src/bind/writ-a2a/rest-client.js"
import { A2aTasks, handleRpc } from "../../src/bind/writ-a2a/rpc.js"
import { application as payment } from "../../src/examples/payment.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Application } from "../../src/writ/executor/services.js"
import { callIdentity } from "../../src/writ/sign.js"
import { NodeHttpClient } from "@effect/platform-node"
import { join } from "node:path"
import { repoRoot } from "../support/shared.js"
import { at, cli, spawnA2aServe, stop, world } from "./sdk-world.js"

const message = (messageId: string, call: JsonObject): SdkMessage => ({
  messageId,
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "data", value: call }, mediaType: "application/writ-call+json", filename: "", metadata: undefined }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})
const send = (messageId: string, call: JsonObject, configuration?: unknown) =>
  ({ tenant: "", message: message(messageId, call), configuration, metadata: undefined }) as Parameters<Client["sendMessage"]>[0]

/** What an SDK call rejected with. */
const rejection = async (p: Promise<unknown> | (() => Promise<unknown>)) => {
  try {
    await (typeof p === "function" ? p() : p)
  } catch (e) {
    const err = e as { name: string; message: string }
    return { name: err.name, message: err.message }
  }
  throw new Error("expected a rejection")
}
const drain = async (events: AsyncGenerator<unknown>) => {
  const all: Array<unknown> = []
  for await (const e of events) all.push(e)
  return all
}

interface Hit {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: { task?: { id: string; status: { state: string }; artifacts?: Array<unknown> } }
}

/** A webhook server on loopback: every request kept, and a wait for the nth to a path. */
const webhook = async (answer: (path: string) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })) => {
  const hits: Array<Hit> = []
  const waiters: Array<() => void> = []
  const server = Http.createServer((req, res) => {
    let data = ""
    req.on("data", (d: Buffer) => (data += d.toString()))
    req.on("end", () => {
      hits.push({ path: req.url ?? "", headers: req.headers, body: data === "" ? {} : JSON.parse(data) })
      const a = answer(req.url ?? "")
      res.writeHead(a.status, a.headers).end()
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const at = (path: string) => hits.filter((h) => h.path === path)
  /** Resolves when `path` has had `n` requests (an event, not a sleep). */
  const nth = (path: string, n: number): Promise<Hit> =>
    at(path).length >= n ? Promise.resolve(at(path)[n - 1]) : new Promise((resolve) => waiters.push(() => resolve(nth(path, n))))
  return { hits, port, url: (path: string) => `http://127.0.0.1:${port}${path}`, nth, close: () => new Promise<void>((r) => server.close(() => r())) }
}

describe("A2A 1.0 ListTasks, SubscribeToTask and push notification configs, SDK 1.3 against mandate writ a2a-serve", () => {
  let child: ChildProcess | undefined
  let plain: ChildProcess | undefined
  let base = ""
  let floodRevoke: JsonObject = {}
  let plainBase = ""
  let w: Awaited<ReturnType<typeof world>>
  let hook: Awaited<ReturnType<typeof webhook>>
  let off: Awaited<ReturnType<typeof webhook>>
  const held: Record<string, JsonObject> = {}

  beforeAll(async () => {
    w = await world("tp-")
    hook = await webhook()
    off = await webhook()
    // Calls that run until a revoke stops them (the example handler's `hold`), one per grant.
    for (const [name, chain] of [["held", "other.json"], ["flood", "once.json"]] as const) {
      await cli("writ", "call", "--key", at("tp-a.key"), "--chain", at(`tp-${chain}`), "--op", "travel/charge", "--args", JSON.stringify({ amount: 7, currency: "USD", hold: true }), "--out", at(`tp-${name}.json`))
      held[name] = JSON.parse(readFileSync(at(`tp-${name}.json`), "utf8")) as JsonObject
    }
    await cli("writ", "revoke", "--key", at("tp-a.key"), "--chain", at("tp-once.json"), "--out", at("tp-revoke-once.json"))
    floodRevoke = JSON.parse(readFileSync(at("tp-revoke-once.json"), "utf8")) as JsonObject
    const started = await spawnA2aServe(w, "tp-", ["--push-allow", `127.0.0.1:${hook.port}`])
    child = started.child
    base = started.base
    const other = await spawnA2aServe(w, "tp-plain-")
    plain = other.child
    plainBase = other.base
  }, 120_000)

  afterAll(async () => {
    await stop(child)
    await stop(plain)
    await hook?.close()
    await off?.close()
  })

  const client = async (binding: "JSONRPC" | "HTTP+JSON", url = base) => {
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] })
    const c = await new ClientFactory(options).createFromUrl(url)
    expect(c.transport.protocolName).toBe(binding)
    return c
  }

  it("ListTasks over both bindings: newest first, cursor pages, filters, artifacts on request; bad params refused", async () => {
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const c = await client(binding)
      const one = (await c.sendMessage(send(`l-1-${binding}`, w.calls.one))) as SdkTask
      const first = (await c.sendMessage(send(`l-2-${binding}`, w.calls.first))) as SdkTask
      // Resent, the first call's task changes again, so it is listed first.
      const all = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined })
      expect(all.tasks.map((t) => t.id).slice(0, 2)).toEqual([first.id, one.id])
      expect(all.totalSize).toBe(all.tasks.length)
      expect(all.nextPageToken).toBe("")
      // Section 3.1.4: without includeArtifacts, no artifacts.
      expect(all.tasks.every((t) => t.artifacts.length === 0)).toBe(true)
      const page1 = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 1, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true })
      expect(page1.tasks.map((t) => t.id)).toEqual([first.id])
      expect(page1.tasks[0].artifacts.length).toBeGreaterThan(0)
      expect(page1.nextPageToken).not.toBe("")
      expect(page1.pageSize).toBe(1)
      const page2 = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 1, pageToken: page1.nextPageToken, historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined })
      expect(page2.tasks.map((t) => t.id)).toEqual([one.id])
      const byContext = await c.listTasks({ tenant: "", contextId: one.contextId, status: 0, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined })
      expect(byContext.tasks.map((t) => t.id)).toEqual([one.id])
      const failed = await c.listTasks({ tenant: "", contextId: "", status: TaskState.TASK_STATE_FAILED, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined })
      expect(failed.tasks).toEqual([])
      const future = await c.listTasks({ tenant: "", contextId: "", status: 0, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: "2999-01-01T00:00:00.000Z", includeArtifacts: undefined })
      expect(future.totalSize).toBe(0)
      // Malformed: a page of 0 or 101, a token this endpoint did not give, a time that is not one.
      const base = { tenant: "", contextId: "", status: 0, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined } as Parameters<Client["listTasks"]>[0]
      for (const bad of [{ pageSize: 0 }, { pageSize: 101 }, { pageToken: "bm9wZQ" }, { statusTimestampAfter: "yesterday" }, { historyLength: -1 }]) {
        expect(await rejection(c.listTasks({ ...base, ...bad }))).toMatchObject({ message: expect.stringMatching(/^malformed at (params|query)/) })
      }
    }
  }, 60_000)

  it("SubscribeToTask: a working task's stream to two subscribers (JSON-RPC and HTTP+JSON) until a revoke ends it; push at each change; final and unknown tasks refused", async () => {
    const rpc = await client("JSONRPC")
    const rest = await client("HTTP+JSON")
    const taskId = callIdentity(held.held)
    // The push config rides in the SendMessage; the call runs until revoked, so this stays pending.
    const sent = rpc.sendMessage(send("s-1", held.held, { taskPushNotificationConfig: { url: hook.url("/held"), token: "tok-1" } }))
    const working = await hook.nth("/held", 1)
    expect(working.body.task?.id).toBe(taskId)
    expect(working.body.task?.status.state).toBe("TASK_STATE_WORKING")
    expect(working.headers["x-a2a-notification-token"]).toBe("tok-1")
    const listed = await rest.listTasks({ tenant: "", contextId: "", status: TaskState.TASK_STATE_WORKING, pageSize: undefined, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined })
    expect(listed.tasks.map((t) => t.id)).toEqual([taskId])

    const streams = [rpc, rest].map((c) => c.resubscribeTask({ tenant: "", id: taskId }))
    const firsts = await Promise.all(streams.map((s) => s.next()))
    for (const f of firsts) {
      const event = f.value as { payload: { $case: string; value: SdkTask } }
      expect(event.payload.$case).toBe("task")
      expect(event.payload.value.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    }
    // The revoke stops the held operation (section 9.1): the task ends canceled, on every stream.
    const canceled = await rest.cancelTask({ tenant: "", id: taskId, metadata: undefined }, { serviceParameters: revokeHeader(w.revokeOther) })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    for (const s of streams) {
      const rest = (await drain(s)) as Array<{ payload: { $case: string; value: { status?: { state: number }; artifact?: unknown } } }>
      expect(rest.length).toBeGreaterThan(0)
      expect(rest.slice(0, -1).every((e) => e.payload.$case === "artifactUpdate")).toBe(true)
      expect(rest.at(-1)!.payload.$case).toBe("statusUpdate")
      expect(rest.at(-1)!.payload.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    }
    expect(((await sent) as SdkTask).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const done = await hook.nth("/held", 2)
    expect(done.body.task?.status.state).toBe("TASK_STATE_CANCELED")

    // Section 3.1.6: a task in a terminal state takes no subscriber; an unknown task is not found.
    for (const c of [rpc, rest]) {
      expect(await rejection(() => drain(c.resubscribeTask({ tenant: "", id: taskId })))).toMatchObject({ name: "UnsupportedOperationError", message: expect.stringMatching(/mandate\/a2a_task_final/) })
      expect(await rejection(() => drain(c.resubscribeTask({ tenant: "", id: "nope" })))).toMatchObject({ name: "TaskNotFoundError" })
    }
  }, 60_000)

  it("push notification configs over both bindings: create, get, list, delete; off the allow list refused unsent; unknown and malformed refused; a revoke's cancel is pushed", async () => {
    const offBefore = off.hits.length
    const seen = new Map<string, SdkTask>()
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const c = await client(binding)
      expect((await c.getAgentCard()).capabilities?.pushNotifications).toBe(true)
      // A task of its own per binding (its configs are the binding's only).
      const task = (await c.sendMessage(send(`p-1-${binding}`, binding === "JSONRPC" ? w.calls.one : w.calls.after))) as SdkTask
      seen.set(binding, task)
      const cfg = (path: string, id = "") => ({ tenant: "", id, taskId: task.id, url: hook.url(path), token: "t", authentication: { scheme: "Bearer", credentials: "secret" } })
      const made = await c.createTaskPushNotificationConfig(cfg(`/cfg-${binding}`))
      expect(made.id).toMatch(/^push-\d+$/)
      expect(made.url).toBe(hook.url(`/cfg-${binding}`))
      // The credentials are write-only: answered without them.
      expect(made.authentication).toEqual({ scheme: "Bearer", credentials: "" })
      const named = await c.createTaskPushNotificationConfig(cfg(`/named-${binding}`, "mine"))
      expect(named.id).toBe("mine")
      expect((await c.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "mine" })).url).toBe(hook.url(`/named-${binding}`))
      expect((await c.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })).configs.map((x) => x.id).sort()).toEqual([made.id, "mine"].sort())
      await c.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "mine" })
      await c.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "mine" }) // idempotent
      expect((await c.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })).configs.map((x) => x.id)).toEqual([made.id])

      // Memory is bounded: a task holds at most MAX_CONFIGS_PER_TASK configs; replacing one is not adding.
      if (binding === "JSONRPC") {
        for (let i = 2; i <= MAX_CONFIGS_PER_TASK; i++) await c.createTaskPushNotificationConfig(cfg(`/lim-${i}`, `lim-${i}`))
        expect(await rejection(c.createTaskPushNotificationConfig(cfg("/lim-over", "lim-over")))).toMatchObject({ message: expect.stringMatching(/^mandate\/a2a_push_config_limit/) })
        expect((await c.createTaskPushNotificationConfig(cfg("/lim-again", "lim-2"))).url).toBe(hook.url("/lim-again"))
        for (let i = 2; i <= MAX_CONFIGS_PER_TASK; i++) await c.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: `lim-${i}` })
      }
      // Off the allow list (another port, another name for the host, another scheme, credentials
      // in the URL): refused, and no request is made.
      for (const url of [off.url("/x"), `http://localhost:${hook.port}/x`, `ftp://127.0.0.1:${hook.port}/x`, `http://u:p@127.0.0.1:${hook.port}/x`, "not a url"]) {
        expect(await rejection(c.createTaskPushNotificationConfig({ ...cfg("/x"), url }))).toMatchObject({ message: expect.stringMatching(/^mandate\/a2a_push_url_refused/) })
      }
      // Unknown task, unknown config, no URL.
      expect(await rejection(c.createTaskPushNotificationConfig({ ...cfg("/x"), taskId: "nope" }))).toMatchObject({ name: "TaskNotFoundError" })
      expect(await rejection(c.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "nope" }))).toMatchObject({ name: "TaskNotFoundError", message: expect.stringMatching(/mandate\/a2a_push_config_not_found/) })
      expect(await rejection(c.listTaskPushNotificationConfig({ tenant: "", taskId: "nope", pageSize: 0, pageToken: "" }))).toMatchObject({ name: "TaskNotFoundError" })
      expect(await rejection(c.deleteTaskPushNotificationConfig({ tenant: "", taskId: "nope", id: "x" }))).toMatchObject({ name: "TaskNotFoundError" })
      expect(await rejection(c.createTaskPushNotificationConfig({ ...cfg("/x"), url: "" }))).toMatchObject({ message: expect.stringMatching(/^malformed/) })
    }
    // A push config in a SendMessage off the list refuses the message before its call runs.
    const rpc = await client("JSONRPC")
    expect(await rejection(rpc.sendMessage(send("p-2", w.calls.after, { taskPushNotificationConfig: { url: off.url("/send") } })))).toMatchObject({ message: expect.stringMatching(/^mandate\/a2a_push_url_refused/) })
    expect(off.hits.length).toBe(offBefore)

    // A revoke cancels the finished tasks of its grant (a change of state): pushed, with the
    // config's authentication.
    await rpc.cancelTask({ tenant: "", id: seen.get("JSONRPC")!.id, metadata: { "io.writ/revoke": w.revoke } })
    const pushed = await hook.nth("/cfg-JSONRPC", 1)
    expect(pushed.body.task?.status.state).toBe("TASK_STATE_CANCELED")
    expect(pushed.headers.authorization).toBe("Bearer secret")
    expect(pushed.headers["x-a2a-notification-token"]).toBe("t")
    expect(off.hits.length).toBe(offBefore)
  }, 60_000)

  it("without --push-allow: the card says pushNotifications false and every push method is refused with its reason", async () => {
    const card = (await (await fetch(`${plainBase}/.well-known/agent-card.json`)).json()) as { capabilities: { pushNotifications: boolean } }
    expect(card.capabilities.pushNotifications).toBe(false)
    const c = await client("JSONRPC", plainBase)
    const task = (await c.sendMessage(send("n-1", w.calls.two))) as SdkTask
    const rpc = (method: string, params: unknown) =>
      fetch(`${plainBase}/a2a`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
        .then(async (r) => (await r.json()) as { error?: { code: number; data: Array<{ reason: string }> } })
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: task.id, url: hook.url("/n") }],
      ["GetTaskPushNotificationConfig", { taskId: task.id, id: "x" }],
      ["ListTaskPushNotificationConfigs", { taskId: task.id }],
      ["DeleteTaskPushNotificationConfig", { taskId: task.id, id: "x" }]
    ] as const) {
      const r = await rpc(method, params)
      expect([r.error?.code, r.error?.data[0].reason]).toEqual([-32003, "mandate/a2a_push_not_supported"])
    }
    const rest = await fetch(`${plainBase}/a2a/tasks/${task.id}/pushNotificationConfigs`)
    expect(rest.status).toBe(400)
    const sent = await rpc("SendMessage", { message: { messageId: "n-2", role: "ROLE_USER", parts: [{ data: w.calls.after, mediaType: "application/writ-call+json" }] }, configuration: { taskPushNotificationConfig: { url: hook.url("/n") } } })
    expect(sent.error?.data[0].reason).toBe("mandate/a2a_push_not_supported")
    expect(hook.hits.filter((h) => h.path === "/n")).toEqual([])
    // And a2a-serve refuses an allow list entry that is neither host nor URL prefix.
    const bad = await cli("writ", "a2a-serve", "--port", "0", "--key", w.seedFile, "--root", w.A, "--handler", join(repoRoot, "src/examples/payment.ts"), "--push-allow", "http://").catch((e: Error) => e.message)
    expect(bad).toMatch(/mandate\/a2a_push_url_refused at --push-allow/)
  }, 60_000)

  it("a flood of subscribers is bounded by the per-peer connection cap (429 mandate/too_many_connections past it)", async () => {
    const runtime = ManagedRuntime.make(Layer.mergeAll(
      plainExecutor({ seed: new Uint8Array(Buffer.from(readFileSync(w.seedFile, "utf8").trim(), "hex")), application: Layer.succeed(Application, payment), roots: [w.A] }),
      A2aTasks.memory(),
      A2aPush.layer(await Effect.runPromise(parseAllowList([`127.0.0.1:${hook.port}`]))).pipe(Layer.provide(A2aWebhook.layer), Layer.provide(NodeHttpClient.layerUndici))
    ))
    const scope = await runtime.runPromise(Scope.make())
    const { base: local } = await runtime.runPromise(Scope.extend(listenA2a({ port: 0, limits: { maxConnections: 16, maxConnectionsPerPeer: 3 } }), scope))
    const taskId = callIdentity(held.flood)
    const request = (path: string, body?: unknown) =>
      new Promise<{ status: number; first: string; res: Http.IncomingMessage }>((resolve, reject) => {
        const req = Http.request(`${local}${path}`, { method: "POST", agent: false, headers: { "content-type": "application/json", accept: "text/event-stream" } }, (res) => {
          res.once("data", (d: Buffer) => resolve({ status: res.statusCode ?? 0, first: d.toString(), res }))
        })
        req.on("error", reject)
        req.end(body === undefined ? "" : JSON.stringify(body))
      })
    // One connection holds the call (it runs until revoked), two subscribe: the peer's three.
    const held1 = request("/a2a", { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "f-1", role: "ROLE_USER", parts: [{ data: held.flood, mediaType: "application/writ-call+json" }] }, configuration: { taskPushNotificationConfig: { url: hook.url("/flood") } } } })
    await hook.nth("/flood", 1)
    const subs = [await request(`/a2a/tasks/${taskId}:subscribe`), await request(`/a2a/tasks/${taskId}:subscribe`)]
    for (const s of subs) expect([s.status, s.first.startsWith("data: ")]).toEqual([200, true])
    const over = await request(`/a2a/tasks/${taskId}:subscribe`)
    expect(over.status).toBe(429)
    expect(over.first).toMatch(/mandate\/too_many_connections/)
    // The revoke (handed to the endpoint in process: the peer's connections are all taken) ends
    // the held call and the streams.
    const revoked = await runtime.runPromise(handleRpc(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "CancelTask", params: { id: taskId, metadata: { "io.writ/revoke": floodRevoke } } })))
    expect(JSON.stringify(revoked)).toMatch(/TASK_STATE_CANCELED/)
    for (const s of subs) s.res.destroy()
    expect((await held1).first).toMatch(/TASK_STATE_CANCELED/)
    await runtime.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
  }, 60_000)
})

describe("the webhook allow list", () => {
  it("names hosts (any port, or one) and URL prefixes; refuses other schemes, credentials, look-alike hosts", async () => {
    const allow = await Effect.runPromise(parseAllowList(["hooks.example.com", "127.0.0.1:8080", "https://a.example/in/"]))
    expect(allowedUrl(allow, "https://hooks.example.com/x")).toBe(true)
    expect(allowedUrl(allow, "http://HOOKS.example.com:9999/x")).toBe(true)
    expect(allowedUrl(allow, "https://hooks.example.com.evil.net/x")).toBe(false)
    expect(allowedUrl(allow, "http://127.0.0.1:8080/")).toBe(true)
    expect(allowedUrl(allow, "http://127.0.0.1:8081/")).toBe(false)
    expect(allowedUrl(allow, "http://127.0.0.1/")).toBe(false)
    expect(allowedUrl(allow, "https://a.example/in/hook")).toBe(true)
    expect(allowedUrl(allow, "https://a.example/out/hook")).toBe(false)
    expect(allowedUrl(allow, "http://a.example/in/hook")).toBe(false)
    expect(allowedUrl(allow, "https://u:p@hooks.example.com/")).toBe(false)
    expect(allowedUrl(allow, "ftp://hooks.example.com/")).toBe(false)
    expect(allowedUrl([], "https://hooks.example.com/")).toBe(false)
    for (const bad of ["", "a b", "ftp://x/", "https://u:p@x/"]) {
      expect((await Effect.runPromise(Effect.either(parseAllowList([bad]))))._tag).toBe("Left")
    }
  })

  it("the webhook client follows no redirect: a listed host cannot send the request on", async () => {
    const target = await webhook()
    const redirecting = await webhook(() => ({ status: 302, headers: { location: target.url("/stolen") } }))
    const result = await Effect.runPromise(Effect.either(Effect.flatMap(A2aWebhook, (h) => h.post(redirecting.url("/r"), {}, new TextEncoder().encode("{}"))).pipe(
      Effect.provide(A2aWebhook.layer),
      Effect.provide(NodeHttpClient.layerUndici)
    )))
    expect(result._tag === "Left" && result.left.message).toMatch(/status 302/)
    expect(redirecting.hits.length).toBe(1)
    expect(target.hits.length).toBe(0)
    await target.close()
    await redirecting.close()
  })
})
