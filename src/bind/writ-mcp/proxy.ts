// The MCP proxy (docs/bindings.md, "The client side, for any MCP client"): an MCP server toward
// the client that relays everything to the real server, except that each `tools/call` leaves
// carrying a Writ call signed under the grant, and each result comes back only when it verifies,
// rebuilt from what its tally authenticates (./client.ts `verified`), never as the server sent it.
//
// Both directions at once: the client and the server are read by separate fibers, and tool calls
// are signed and sent in order by a third, so a server can ask the client something mid-call
// (elicitation, sampling, roots, ping) and get its answer while the call is open. Every request
// the server receives goes under an id the proxy allocates (the server never sees an id twice and
// a response reaches only the request it answers); the client's id is put back on the way out, and
// a `notifications/cancelled` is passed on under the id the server knows. The server's requests
// keep their ids; notifications and any other `_meta` (a progress token) pass unchanged.
//
// Shutdown: when the client closes, the server's requests to it are answered with an error, the
// client's open requests may finish (within `shutdownGrace`), then the server's input is closed.
// When the server exits, every open client request is answered with an error (`unreachable_server`
// for a tool call) and the proxy ends.
//
// Bounds (docs/mcp-gate.md): a request other than `tools/call` passes only as methods.ts allows
// (`method_refused`); a verified result whose rendering is over `maxResultBytes` is not passed on
// (`result_too_large`) but its tally is kept as a receipt, since the call ran and counted; and at
// most `maxQueuedNotifications` of the server's notifications wait for a client that does not
// read: past that they are dropped (and logged), never responses or requests, so the session goes on.
//
// Forms (MCP basic/utilities/progress): while the server waits on the client for an elicitation
// or sampling answer (a person may be typing), every open tool call whose client gave a progress
// token gets a progress notification each `keepAlive`, so a client that restarts its time limit on
// progress keeps the call. Its value follows the last one seen under that token, so it increases.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Deferred, Duration, Effect, FiberSet, Option, Queue, Runtime, type Scope } from "effect"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { RandomBytes, Signer } from "../../kernel/services.js"
import { delegate, type HeldWrit, holdChain, makeCall } from "../../writ/issue.js"
import { writError, type WritError } from "../../writ/reason.js"
import { ready, verified } from "./client.js"
import { checkMethod, offeredCapabilities } from "./methods.js"
import { checkClosed, checkPinned, pinnedOnly, pinOf, type PinFile } from "./policy.js"
import { advertisementOf, CALL_META, toolOp } from "./present.js"
import { CLIENT_GONE, type McpPolicyError, resultTooLarge, unenforcedServer, type UnenforcedServer, unreachableServer } from "./reason.js"
import { Receipts, receipt } from "./receipts.js"
import { errorAnswer, fromSdk, idKey, INTERNAL, isNotification, isRequest, isResponse, listAllTools, type Message, REFUSED, type RequestId, RpcError, send } from "./rpc.js"

export interface ProxyOptions {
  /** Toward the MCP client (the proxy is its server). */
  readonly client: Transport
  /** Toward the real server (the proxy is its client); started by the proxy. */
  readonly server: Transport
  /** The grant: a chain from its root to the Signer's key (the agent). */
  readonly grant: ReadonlyArray<Json>
  /** Only tools whose definition hashes to their pin are listed or called. */
  readonly pins?: PinFile
  /** Refuse arguments no application bound of the grant names. */
  readonly closed?: boolean
  /** After the client closes, how long its open requests may take. Default 60 seconds. */
  readonly shutdownGrace?: Duration.DurationInput
  /** How long the proxy's own `tools/list` (re-listing for pins) may take. Default 30 seconds. */
  readonly requestTimeout?: Duration.DurationInput
  /** Requests other than `tools/call` relayed unchecked (methods.ts `ruleOf`). Default none. */
  readonly allow?: ReadonlyArray<string>
  /** The largest verified result passed on (JSON characters). Default MAX_RESULT_BYTES. */
  readonly maxResultBytes?: number
  /** The most server notifications waiting to be relayed. Default MAX_QUEUED_NOTIFICATIONS. */
  readonly maxQueuedNotifications?: number
  /** How often open tool calls get progress while a form is open. Default 15 seconds. */
  readonly keepAlive?: Duration.DurationInput
}

/** The server's requests a person may take a while to answer. */
const FORM_METHODS: ReadonlySet<string> = new Set(["elicitation/create", "sampling/createMessage"])
/** The message of the proxy's own progress while a form is open. */
export const FORM_WAITING = "waiting for an answer from the client (a form or sampling)"

/** The default bound of a result passed on: under the 10 MiB line a stdio client reads. */
export const MAX_RESULT_BYTES = 8 * 1024 * 1024
/** The default bound of notifications waiting for the client. */
export const MAX_QUEUED_NOTIFICATIONS = 1000

type Pending =
  | {
    readonly tag: "client"
    readonly clientId: RequestId
    readonly method: string
    readonly cursor: boolean
    readonly tool?: { readonly name: string; readonly call: JsonObject; readonly callId: string }
    /** The client's progress token for this request, if it gave one. */
    readonly progressToken?: string | number
    canceled: boolean
  }
  | { readonly tag: "own"; readonly answer: Deferred.Deferred<Message, RpcError> }

interface ToolCall {
  readonly id: RequestId
  readonly params: JsonObject
}

const paramsOf = (m: Message): JsonObject => (isJsonObject(m.params) ? m.params : {})

/** Runs the proxy until the client has gone and its requests are answered, or the server exits. */
export const runProxy = (o: ProxyOptions): Effect.Effect<void, WritError | RpcError, Signer | RandomBytes | Receipts | Scope.Scope> =>
  Effect.gen(function*() {
    // The grant is taken up before anything starts: a chain that does not verify, or whose leaf
    // the Signer does not hold, is refused with its section 4 reason.
    const held: HeldWrit = yield* holdChain(o.grant)
    const allow = o.allow ?? []
    const maxResult = o.maxResultBytes ?? MAX_RESULT_BYTES
    const maxNotes = o.maxQueuedNotifications ?? MAX_QUEUED_NOTIFICATIONS
    /** Server notifications queued and not yet relayed, and those dropped since the last warning. */
    let queuedNotes = 0
    let droppedNotes = 0
    const runtime = yield* Effect.runtime<Signer | RandomBytes | Receipts>()
    const fibers = yield* FiberSet.make()
    const fromClient = yield* Queue.unbounded<Message>()
    const fromServer = yield* Queue.unbounded<Message>()
    const toolCalls = yield* Queue.unbounded<ToolCall>()
    const done = yield* Deferred.make<void>()
    /** Resolved once the server answered `initialize` (or exited): a client may pipeline its
     * first tool calls behind `initialize` without waiting for the answer. */
    const initialized = yield* Deferred.make<void>()
    const drained = yield* Deferred.make<void>()

    const pending = new Map<number, Pending>()
    /** The server's form requests (FORM_METHODS) the client has not answered. */
    const forms = new Set<string>()
    /** The last progress value the client was sent under each token. */
    const lastProgress = new Map<string, number>()
    /** The client's open requests: the id the server knows them by, or "queued" (not yet sent). */
    const clientOpen = new Map<string, number | "queued">()
    const canceledQueued = new Set<string>()
    /** The server's requests the client has not answered. */
    const serverOpen = new Map<string, RequestId>()
    let nextId = 1
    let clientClosed = false
    let serverGone = false
    /** What the server advertised at initialize, and the grant passed on to its key. */
    let writ: { readonly advertised: boolean; readonly chain: Option.Option<ReadonlyArray<Json>> } | undefined
    /** Pins: each tool's pin as the server last listed it; stale after `list_changed`. */
    const listed = new Map<string, string>()
    let stale = true

    const toClient = (m: Message) => send(o.client, m)
    const toServer = (m: Message) => send(o.server, m)
    const checkDrained = Effect.suspend(() =>
      clientClosed && clientOpen.size === 0 ? Deferred.succeed(drained, undefined) : Effect.void)

    // The proxy's own request to the server (re-listing tools for pins).
    const own = (method: string, params: JsonObject): Effect.Effect<JsonObject, RpcError> =>
      Effect.gen(function*() {
        if (serverGone) return yield* Effect.fail(new RpcError({ message: "the server exited" }))
        const id = nextId++
        const answer = yield* Deferred.make<Message, RpcError>()
        pending.set(id, { tag: "own", answer })
        yield* toServer({ jsonrpc: "2.0", id, method, params })
        const m = yield* Deferred.await(answer).pipe(
          Effect.timeoutFail({ duration: o.requestTimeout ?? "30 seconds", onTimeout: () => new RpcError({ message: `${method}: no answer in time` }) }),
          Effect.ensuring(Effect.sync(() => pending.delete(id)))
        )
        if (!isJsonObject(m.result)) return yield* Effect.fail(new RpcError({ message: `${method}: ${JSON.stringify(m.error ?? null)}` }))
        return m.result
      })

    const forward = (m: Message, extra: Partial<Pick<Extract<Pending, { tag: "client" }>, "tool">> = {}) =>
      Effect.gen(function*() {
        const id = nextId++
        const method = m.method as string
        const meta = paramsOf(m)._meta
        const token = isJsonObject(meta) && (typeof meta.progressToken === "string" || typeof meta.progressToken === "number") ? meta.progressToken : undefined
        pending.set(id, {
          tag: "client", clientId: m.id as RequestId, method, cursor: paramsOf(m).cursor !== undefined, canceled: false,
          ...(token === undefined ? {} : { progressToken: token }), ...extra
        })
        clientOpen.set(idKey(m.id as RequestId), id)
        yield* toServer({ ...m, id })
      })

    // ----- the client, read on its own fiber
    const onClient = (m: Message): Effect.Effect<void> => {
      if (isRequest(m)) {
        if (serverGone) return toClient(errorAnswer(m.id as RequestId, INTERNAL, "unreachable_server", "the server exited"))
        if (m.method === "tools/call") {
          clientOpen.set(idKey(m.id as RequestId), "queued")
          return Queue.offer(toolCalls, { id: m.id as RequestId, params: paramsOf(m) })
        }
        return checkMethod(m.method as string, allow).pipe(Effect.matchEffect({
          onFailure: (e) => toClient(errorAnswer(m.id as RequestId, REFUSED, e.reason, e.message)),
          onSuccess: () => forward(m)
        }))
      }
      if (isResponse(m)) {
        serverOpen.delete(idKey(m.id as RequestId))
        forms.delete(idKey(m.id as RequestId))
        return toServer(m)
      }
      if (isNotification(m) && m.method === "notifications/cancelled") {
        const p = paramsOf(m)
        const key = idKey(p.requestId as RequestId)
        const open = clientOpen.get(key)
        if (open === undefined) return Effect.void
        clientOpen.delete(key)
        if (open === "queued") {
          canceledQueued.add(key)
          return checkDrained
        }
        const entry = pending.get(open)
        if (entry?.tag === "client") entry.canceled = true
        return Effect.zipRight(toServer({ ...m, params: { ...p, requestId: open } }), checkDrained)
      }
      return toServer(m)
    }

    // ----- tool calls, signed and sent in the order the client sent them
    const refuse = (id: RequestId, e: WritError | McpPolicyError | UnenforcedServer) =>
      Effect.gen(function*() {
        clientOpen.delete(idKey(id))
        yield* Effect.logInfo(`tool call refused before sending: ${e.reason}: ${e.message}`)
        yield* toClient(errorAnswer(id, REFUSED, e.reason, e.message, "path" in e ? e.path : undefined))
        yield* checkDrained
      })

    const relist = Effect.gen(function*() {
      const tools = yield* listAllTools(own)
      listed.clear()
      for (const t of tools) if (typeof t.name === "string") listed.set(t.name, pinOf(t))
      stale = false
    }).pipe(Effect.catchTag("RpcError", (e) => Effect.fail(unreachableServer(`listing tools: ${e.message}`))))

    const onToolCall = (c: ToolCall): Effect.Effect<void, never, Signer | RandomBytes> =>
      Effect.gen(function*() {
        const key = idKey(c.id)
        if (canceledQueued.delete(key)) return
        const name = typeof c.params.name === "string" ? c.params.name : ""
        const args = isJsonObject(c.params.arguments) ? c.params.arguments : {}
        const sign = Effect.gen(function*() {
          if (writ === undefined && !serverGone) {
            yield* Deferred.await(initialized).pipe(Effect.timeoutOption(o.requestTimeout ?? "30 seconds"))
          }
          if (serverGone) return yield* Effect.fail(unreachableServer("the server exited"))
          if (writ === undefined) return yield* Effect.fail(unenforcedServer("the server has not been initialized"))
          // Adoption.md 2a's first rule; and with no advertised key there is no executor to pass
          // the grant on to, so nothing is sent unenforced whatever the bounds.
          yield* ready(held.chain, writ.advertised)
          if (Option.isNone(writ.chain)) return yield* Effect.fail(unenforcedServer("the server does not advertise io.writ/delegation with its key"))
          if (o.pins !== undefined) {
            if (stale) yield* relist
            yield* checkPinned(o.pins, name, listed.get(name))
          }
          if (o.closed === true) yield* checkClosed(held.leaf, args)
          if (name === "") return yield* Effect.fail(writError("malformed", "params.name", "a tool call names its tool"))
          return yield* makeCall({ chain: writ.chain.value, op: toolOp(name), args })
        })
        yield* sign.pipe(Effect.matchEffect({
          onFailure: (e) => refuse(c.id, e),
          onSuccess: (made) => {
            // Canceled while it was being signed: never sent, never answered (MCP cancellation).
            if (canceledQueued.delete(key)) return checkDrained
            const call = made.call.json
            const meta = isJsonObject(c.params._meta) ? c.params._meta : {}
            return forward(
              { jsonrpc: "2.0", id: c.id, method: "tools/call", params: { ...c.params, arguments: args, _meta: { ...meta, [CALL_META]: call } } },
              { tool: { name, call, callId: made.call.id } }
            )
          }
        }))
      })

    // ----- the server, read on its own fiber
    const learn = (result: JsonObject) =>
      Effect.gen(function*() {
        const ad = advertisementOf(result.capabilities)
        if (ad === undefined) {
          writ = { advertised: false, chain: Option.none() }
          return yield* Deferred.succeed(initialized, undefined)
        }
        // The grant passed on to the server's key unchanged (no narrowing): the executor must be
        // the leaf holder (spec section 7 step 6).
        const chain = yield* delegate(held, { hld: ad.did }).pipe(
          Effect.map((child) => Option.some<ReadonlyArray<Json>>(child.chain)),
          Effect.catchTag("WritError", (e) =>
            Effect.as(Effect.logWarning(`the grant cannot be passed on to ${ad.did}: ${e.reason}`), Option.none()))
        )
        writ = { advertised: true, chain }
        yield* Deferred.succeed(initialized, undefined)
      })

    const answerTool = (p: Extract<Pending, { tag: "client" }>, m: Message) =>
      Effect.gen(function*() {
        const tool = p.tool!
        // A JSON-RPC error claims nothing was done; it passes as it is.
        if (m.result === undefined) return yield* toClient({ ...m, id: p.clientId })
        yield* verified(tool.call, m.result).pipe(Effect.matchEffect({
          // Refused: the client gets the reason, the receipts nothing.
          onFailure: (e) =>
            Effect.zipRight(
              Effect.logWarning(`tool result refused: ${e.reason}: ${e.message}`),
              toClient(errorAnswer(p.clientId, REFUSED, e.reason, e.message, "path" in e ? e.path : undefined))
            ),
          onSuccess: (v) => {
            const size = JSON.stringify(v.result).length
            if (size > maxResult) {
              // It ran and counted: the tally is kept (without the body), the body not passed on.
              const e = resultTooLarge(`the verified result is ${size} characters, over ${maxResult}; its tally is kept as a receipt`)
              return Effect.zipRight(
                Effect.flatMap(Receipts, (rs) => rs.keep(receipt(tool.name, tool.callId, v.checked.tally.json, undefined))),
                toClient(errorAnswer(p.clientId, REFUSED, e.reason, e.message))
              )
            }
            return Effect.zipRight(
              Effect.flatMap(Receipts, (rs) => rs.keep(receipt(tool.name, tool.callId, v.checked.tally.json, v.checked.body))),
              toClient({ jsonrpc: "2.0", id: p.clientId, result: v.result })
            )
          }
        }))
      })

    const onServer = (m: Message): Effect.Effect<void, never, Signer | RandomBytes | Receipts> =>
      Effect.gen(function*() {
        if (isResponse(m)) {
          const id = m.id as number
          const p = pending.get(id)
          if (p === undefined) return yield* Effect.logWarning(`a response to no open request (${String(m.id)}) dropped`)
          pending.delete(id)
          if (p.tag === "own") return yield* Deferred.succeed(p.answer, m)
          const key = idKey(p.clientId)
          if (clientOpen.get(key) === id) clientOpen.delete(key)
          // A canceled request is not answered (MCP cancellation; bindings.md Limitations).
          if (!p.canceled) {
            if (p.method === "initialize" && isJsonObject(m.result)) yield* learn(m.result)
            if (p.tool !== undefined) yield* answerTool(p, m)
            else if (p.method === "initialize" && isJsonObject(m.result)) {
              yield* toClient({ ...m, id: p.clientId, result: { ...m.result, capabilities: offeredCapabilities(m.result.capabilities, allow) } as JsonObject })
            }
            else if (p.method === "tools/list" && o.pins !== undefined && isJsonObject(m.result)) {
              const tools = Array.isArray(m.result.tools) ? m.result.tools.filter(isJsonObject) : []
              if (!p.cursor) listed.clear()
              for (const t of tools) if (typeof t.name === "string") listed.set(t.name, pinOf(t))
              if (!p.cursor) stale = false
              yield* toClient({ ...m, id: p.clientId, result: { ...m.result, tools: pinnedOnly(o.pins, tools) } })
            } else yield* toClient({ ...m, id: p.clientId })
          }
          return yield* checkDrained
        }
        if (isRequest(m)) {
          if (clientClosed) return yield* toServer(errorAnswer(m.id as RequestId, INTERNAL, CLIENT_GONE, "the client has closed"))
          serverOpen.set(idKey(m.id as RequestId), m.id as RequestId)
          if (FORM_METHODS.has(m.method as string)) forms.add(idKey(m.id as RequestId))
          return yield* toClient(m)
        }
        if (m.method === "notifications/tools/list_changed") stale = true
        if (isNotification(m)) queuedNotes--
        if (m.method === "notifications/progress") {
          const p = paramsOf(m)
          if (typeof p.progress === "number" && (typeof p.progressToken === "string" || typeof p.progressToken === "number")) {
            lastProgress.set(idKey(p.progressToken), p.progress)
          }
        }
        yield* toClient(m)
      })

    // ----- forms: progress to the open tool calls while the client is answering one
    const keepCallsAlive = Effect.suspend(() => {
      if (forms.size === 0 || clientClosed) return Effect.void
      const open = [...pending.values()].flatMap((p) =>
        p.tag === "client" && p.tool !== undefined && !p.canceled && p.progressToken !== undefined ? [p.progressToken] : [])
      return Effect.forEach(open, (token) => {
        const progress = (lastProgress.get(idKey(token)) ?? 0) + 1
        lastProgress.set(idKey(token), progress)
        return toClient({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress, message: FORM_WAITING } })
      }, { discard: true })
    })

    // ----- shutdown
    const clientGone = Effect.gen(function*() {
      if (clientClosed) return
      clientClosed = true
      for (const id of serverOpen.values()) yield* toServer(errorAnswer(id, INTERNAL, CLIENT_GONE, "the client has closed"))
      serverOpen.clear()
      forms.clear()
      yield* checkDrained
      yield* Deferred.await(drained).pipe(Effect.timeoutOption(o.shutdownGrace ?? "60 seconds"))
      yield* Effect.promise(() => o.server.close().catch(() => undefined))
      yield* Deferred.succeed(done, undefined)
    })

    const serverExited = Effect.gen(function*() {
      if (serverGone) return
      serverGone = true
      yield* Deferred.succeed(initialized, undefined)
      for (const [id, p] of pending) {
        pending.delete(id)
        if (p.tag === "own") yield* Deferred.fail(p.answer, new RpcError({ message: "the server exited" }))
        else if (!p.canceled && !clientClosed) {
          yield* toClient(errorAnswer(p.clientId, INTERNAL, "unreachable_server", "the server exited with the request open"))
        }
      }
      clientOpen.clear()
      yield* checkDrained
      if (!clientClosed) yield* Effect.promise(() => o.client.close().catch(() => undefined))
      yield* Deferred.succeed(done, undefined)
    })

    // Transports call back outside Effect: each message is queued for its reader, in order.
    const unsafeRun = Runtime.runFork(runtime)
    o.client.onmessage = (m) => void Queue.unsafeOffer(fromClient, fromSdk(m))
    o.server.onmessage = (m) => {
      const msg = fromSdk(m)
      if (isNotification(msg)) {
        if (queuedNotes >= maxNotes) {
          // The client is not reading: this one is dropped, and the drops are told once per burst.
          if (droppedNotes++ === 0) unsafeRun(Effect.logWarning(`the client is not reading: server notifications past ${maxNotes} queued are dropped`))
          return
        }
        if (droppedNotes > 0 && queuedNotes === 0) {
          unsafeRun(Effect.logWarning(`${droppedNotes} server notifications were dropped`))
          droppedNotes = 0
        }
        queuedNotes++
      }
      Queue.unsafeOffer(fromServer, msg)
    }
    o.client.onclose = () => void unsafeRun(FiberSet.run(fibers, clientGone))
    o.server.onclose = () => void unsafeRun(FiberSet.run(fibers, serverExited))
    o.client.onerror = (e) => void unsafeRun(Effect.logWarning(`client transport: ${e.message}`))
    o.server.onerror = (e) => void unsafeRun(Effect.logWarning(`server transport: ${e.message}`))

    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(fromClient), onClient)))
    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(fromServer), onServer)))
    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(toolCalls), onToolCall)))
    yield* FiberSet.run(fibers, Effect.forever(Effect.zipRight(Effect.sleep(o.keepAlive ?? "15 seconds"), keepCallsAlive)))

    yield* Effect.tryPromise({ try: () => o.server.start(), catch: (e) => new RpcError({ message: `cannot start the server: ${String(e)}` }) })
    yield* Effect.tryPromise({ try: () => o.client.start(), catch: (e) => new RpcError({ message: `cannot start the client side: ${String(e)}` }) })
    yield* Deferred.await(done)
  }).pipe(Effect.withSpan("writ.mcp.proxy"))
