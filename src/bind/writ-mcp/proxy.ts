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
// Bound requests (./bound.ts): `tools/call`, `resources/read` and `prompts/get` each leave
// carrying a Writ call signed under the grant (op and args as bound.ts maps them), in the order the
// client sent them, and come back only verified (./proxy-answer.ts). One the leaf's `act` does not
// name is refused before signing: `forbidden_op` for a tool (the Writ check), `method_refused` for a
// resource or prompt (as before those were bound). Every listing (`tools/list` too), every allowed
// request that names an item (`resources/subscribe`, `completion/complete`) and
// `notifications/resources/updated` are held to the leaf (./scope.ts). Other requests pass only as
// methods.ts allows (`method_refused`).
//
// Bounds (docs/mcp-gate.md): a verified result over `maxResultBytes` is not passed on
// (`result_too_large`, proxy-answer.ts), and at most `maxQueuedNotifications` server notifications
// wait for a client that does not read (./notes.ts). Forms keep the open calls alive (./keep-alive.ts).
//
// Its parts, by concept: the options (./proxy-options.ts), signing a bound request
// (./proxy-sign.ts), the answer to a bound request (./proxy-answer.ts) and to any other
// (./proxy-present.ts).
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Deferred, Effect, FiberSet, Queue, Runtime, type Scope } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { RandomBytes, Signer } from "../../kernel/services.js"
import { type HeldWrit, holdChain } from "../../writ/issue.js"
import type { WritError } from "../../writ/reason.js"
import { BOUND_METHODS, boundRequest, withCall } from "./bound.js"
import { FormKeepAlive, progressTokenOf } from "./keep-alive.js"
import { checkMethod, LISTINGS } from "./methods.js"
import { MAX_QUEUED_NOTIFICATIONS, noteBound } from "./notes.js"
import { answerBound, receiptName } from "./proxy-answer.js"
import { MAX_RESULT_BYTES, type ProxyOptions } from "./proxy-options.js"
import { type Listed, type Presenting, presentAnswer, takeListed } from "./proxy-present.js"
import { type Advertised, advertisedBy, type SignError, signBound, type Signing } from "./proxy-sign.js"
import { type ProxyUpstream, proxyUpstream } from "./proxy-upstream.js"
import { outsideGrant, visibleUnder } from "./scope.js"
import { CLIENT_GONE, unreachableServer } from "./reason.js"
import { type BoundCall, Dropped, paramsOf, type Pending } from "./proxy-state.js"
import { Receipts, unansweredReceipt } from "./receipts.js"
import { errorAnswer, fromSdk, idKey, initializeParams, INTERNAL, isNotification, isRequest, isResponse, listAllTools, type Message, REFUSED, type RequestId, RpcError, send, toSdk } from "./rpc.js"

export { FORM_WAITING } from "./keep-alive.js"
export { MAX_QUEUED_NOTIFICATIONS } from "./notes.js"
export { MAX_RESULT_BYTES, type ProxyOptions } from "./proxy-options.js"

/** Runs the proxy until the client has gone and its requests are answered, or the server exits. */
export const runProxy = (o: ProxyOptions): Effect.Effect<void, WritError | RpcError, Signer | RandomBytes | Receipts | Scope.Scope> =>
  Effect.flatMap(startProxy(o), (p) => p.done).pipe(Effect.withSpan("writ.mcp.proxy"))

/** A proxy started: both transports started and read; `done` resolves when it has ended. */
export interface StartedProxy {
  readonly done: Effect.Effect<void>
}

/** Starts the proxy in the current scope and returns once both sides are started (a listener
 * hands the client's first request to the transport only then: ../mcp/remote.ts). */
export const startProxy = (o: ProxyOptions): Effect.Effect<StartedProxy, WritError | RpcError, Signer | RandomBytes | Receipts | Scope.Scope> =>
  Effect.gen(function*() {
    // The grant is taken up before anything starts: a chain that does not verify, or whose leaf
    // the Signer does not hold, is refused with its section 4 reason.
    const held: HeldWrit = yield* holdChain(o.grant)
    const allow = o.allow ?? []
    const maxResult = o.maxResultBytes ?? MAX_RESULT_BYTES
    const leaf = held.leaf.value.bnd
    const runtime = yield* Effect.runtime<Signer | RandomBytes | Receipts>()
    const fibers = yield* FiberSet.make()
    const fromClient = yield* Queue.unbounded<Message>()
    const fromServer = yield* Queue.unbounded<Message | Dropped>()
    const boundCalls = yield* Queue.unbounded<BoundCall>()
    const done = yield* Deferred.make<void>()
    /** Resolved once the server answered `initialize` (or exited): a client may pipeline its
     * first tool calls behind `initialize` without waiting for the answer. */
    const initialized = yield* Deferred.make<void>()
    const drained = yield* Deferred.make<void>()

    const pending = new Map<number, Pending>()
    const forms = new FormKeepAlive()
    /** The client's open requests: the id the server knows them by, or "queued" (not yet sent). */
    const clientOpen = new Map<string, number | "queued">()
    const canceledQueued = new Set<string>()
    /** The server's requests the client has not answered. */
    const serverOpen = new Map<string, RequestId>()
    let nextId = 1
    let clientClosed = false
    let serverGone = false
    /** What the server advertised at initialize, and the grant passed on to its key. */
    let writ: Advertised | undefined
    const listed: Listed = { pins: new Map(), stale: true }
    const presenting: Presenting = { leaf, allow, pins: o.pins, listed }
    /** The client's initialize parameters, sent again when the server is reconnected. */
    let initParams: JsonObject | undefined
    // Assigned once the transports' handlers exist (below).
    let up: ProxyUpstream

    const toClient = (m: Message) => send(o.client, m)
    const toServer = (m: Message) => send(up.current(), m)
    const checkDrained = Effect.suspend(() =>
      clientClosed && clientOpen.size === 0 ? Deferred.succeed(drained, undefined) : Effect.void)

    // The proxy's own request to the server (re-listing tools for pins).
    const own = (method: string, params: JsonObject): Effect.Effect<JsonObject, RpcError> =>
      Effect.gen(function*() {
        if (serverGone) return yield* Effect.fail(new RpcError({ message: "the server exited" }))
        const id = nextId++
        const answer = yield* Deferred.make<Message, RpcError>()
        pending.set(id, { tag: "own", answer })
        const m = yield* Effect.tryPromise({
          try: () => up.current().send(toSdk({ jsonrpc: "2.0", id, method, params })),
          catch: (e) => new RpcError({ message: `${method}: not sent: ${String(e)}` })
        }).pipe(
          Effect.zipRight(Deferred.await(answer)),
          Effect.timeoutFail({ duration: o.requestTimeout ?? "30 seconds", onTimeout: () => new RpcError({ message: `${method}: no answer in time` }) }),
          Effect.ensuring(Effect.sync(() => pending.delete(id)))
        )
        if (!isJsonObject(m.result)) return yield* Effect.fail(new RpcError({ message: `${method}: ${JSON.stringify(m.error ?? null)}` }))
        return m.result
      })

    const forward = (m: Message, extra: Partial<Pick<Extract<Pending, { tag: "client" }>, "bound" | "listing">> = {}): Effect.Effect<void> =>
      Effect.gen(function*() {
        // A server that dropped is reconnected first (./proxy-upstream.ts), or the request refused.
        const down = yield* Effect.flip(up.ensure).pipe(Effect.option)
        if (down._tag === "Some") return yield* refuse(m.id as RequestId, down.value)
        if (m.method === "initialize") initParams = paramsOf(m)
        const id = nextId++
        const method = m.method as string
        const token = progressTokenOf(paramsOf(m))
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
        if (BOUND_METHODS.has(m.method as string)) {
          clientOpen.set(idKey(m.id as RequestId), "queued")
          return Queue.offer(boundCalls, { id: m.id as RequestId, method: m.method as string, params: paramsOf(m) })
        }
        if (LISTINGS.has(m.method as string)) return forward(m, { listing: m.method as string })
        // An allowed request that names an item is still held to the grant (./scope.ts).
        return checkMethod(m.method as string, allow).pipe(
          Effect.zipRight(Effect.suspend(() => {
            const outside = outsideGrant(leaf, m.method as string, paramsOf(m))
            return outside === undefined ? Effect.void : Effect.fail(outside)
          })),
          Effect.matchEffect({
            onFailure: (e) => toClient(errorAnswer(m.id as RequestId, REFUSED, e.reason, e.message)),
            onSuccess: () => forward(m)
          })
        )
      }
      if (isResponse(m)) {
        forms.answered(m.id as RequestId)
        // An answer to a request of a server session that dropped is not passed to the next one.
        if (!serverOpen.delete(idKey(m.id as RequestId))) return Effect.logDebug(`an answer to no open server request (${String(m.id)}) dropped`)
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

    // ----- bound calls, signed and sent in the order the client sent them
    const refuse = (id: RequestId, e: SignError) =>
      Effect.gen(function*() {
        clientOpen.delete(idKey(id))
        yield* Effect.logInfo(`request refused before sending: ${e.reason}: ${e.message}`)
        yield* toClient(errorAnswer(id, REFUSED, e.reason, e.message, "path" in e ? e.path : undefined))
        yield* checkDrained
      })

    const signing: Signing = {
      held,
      pins: o.pins,
      closed: o.closed === true,
      requestTimeout: o.requestTimeout ?? "30 seconds",
      initialized,
      advertised: () => (serverGone ? Effect.fail(unreachableServer("the server exited")) : Effect.succeed(writ)),
      listed,
      relist: Effect.gen(function*() {
        takeListed(listed, yield* listAllTools(own), true)
      }).pipe(Effect.catchTag("RpcError", (e) => Effect.fail(unreachableServer(`listing tools: ${e.message}`))))
    }

    const onBoundCall = (c: BoundCall): Effect.Effect<void, never, Signer | RandomBytes> =>
      Effect.gen(function*() {
        const key = idKey(c.id)
        if (canceledQueued.delete(key)) return
        const r = boundRequest(c.method, c.params)!
        // Reconnected first, so the call is signed to the key the server advertises now.
        yield* Effect.zipRight(up.ensure, signBound(signing, r)).pipe(Effect.matchEffect({
          onFailure: (e) => refuse(c.id, e),
          onSuccess: (made) => {
            // Canceled while it was being signed: never sent, never answered (MCP cancellation).
            if (canceledQueued.delete(key)) return checkDrained
            const call = made.call.json
            return forward(
              { jsonrpc: "2.0", id: c.id, method: c.method, params: withCall(r, c.params, call) },
              { bound: { method: r.method, name: r.name, call, callId: made.call.id } }
            )
          }
        }))
      })

    // ----- the server, read on its own fiber
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
            if (p.method === "initialize" && isJsonObject(m.result)) {
              writ = yield* advertisedBy(held, m.result)
              yield* Deferred.succeed(initialized, undefined)
            }
            if (p.bound !== undefined) yield* answerBound(p.bound, p.clientId, m, maxResult, toClient)
            else yield* toClient(presentAnswer(presenting, p.method, p.clientId, p.cursor, p.listing, m))
          }
          return yield* checkDrained
        }
        if (isRequest(m)) {
          if (clientClosed) return yield* toServer(errorAnswer(m.id as RequestId, INTERNAL, CLIENT_GONE, "the client has closed"))
          serverOpen.set(idKey(m.id as RequestId), m.id as RequestId)
          forms.opened(m.id as RequestId, m.method as string)
          return yield* toClient(m)
        }
        if (m.method === "notifications/tools/list_changed") listed.stale = true
        if (isNotification(m)) notes.taken()
        if (!visibleUnder(leaf, m.method as string, paramsOf(m))) return yield* Effect.logDebug(`${String(m.method)} outside the grant not relayed`)
        if (m.method === "notifications/progress") {
          forms.saw(paramsOf(m))
          // On the stream of the request it reports on, where the client has one per request
          // (Streamable HTTP: the POST's SSE stream), rather than the session's standing stream.
          const token = paramsOf(m).progressToken
          const about = [...pending.values()].find((p) => p.tag === "client" && p.progressToken !== undefined && p.progressToken === token)
          if (about?.tag === "client") return yield* send(o.client, m, about.clientId)
        }
        yield* toClient(m)
      })

    // ----- a server over Streamable HTTP that dropped (./proxy-upstream.ts)
    const serverDropped = (d: Dropped): Effect.Effect<void, never, Receipts> =>
      Effect.gen(function*() {
        if (!up.dropped(d.transport)) return
        yield* Effect.logWarning(`mcp-proxy: the server dropped (${d.why}); requests open on it are answered unreachable_server and never sent again; the next request reconnects`)
        const receipts = yield* Receipts
        for (const [id, p] of pending) {
          pending.delete(id)
          if (p.tag === "own") {
            yield* Deferred.fail(p.answer, new RpcError({ message: "the server dropped" }))
            continue
          }
          const key = idKey(p.clientId)
          if (clientOpen.get(key) === id) clientOpen.delete(key)
          // Sent, so it may have run: recorded with no tally, and not sent again (spec 7.3).
          if (p.bound !== undefined) yield* receipts.keep(unansweredReceipt(receiptName(p.bound), p.bound.callId))
          if (!p.canceled && !clientClosed) {
            yield* toClient(errorAnswer(p.clientId, INTERNAL, "unreachable_server", "the server dropped with this request open: it may have run, and it is not sent again"))
          }
        }
        // The dropped session's requests to the client: their answers have nowhere to go.
        serverOpen.clear()
        forms.clear()
        yield* Effect.promise(() => d.transport.close().catch(() => undefined))
        yield* checkDrained
      })

    // ----- forms: progress to the open bound calls while the client is answering one
    const keepCallsAlive = Effect.suspend(() =>
      clientClosed ? Effect.void : forms.tick(
        [...pending.values()].flatMap((p) =>
          p.tag === "client" && p.bound !== undefined && !p.canceled && p.progressToken !== undefined ? [p.progressToken] : []),
        toClient
      ))

    // ----- shutdown
    const clientGone = Effect.gen(function*() {
      if (clientClosed) return
      clientClosed = true
      for (const id of serverOpen.values()) yield* toServer(errorAnswer(id, INTERNAL, CLIENT_GONE, "the client has closed"))
      serverOpen.clear()
      forms.clear()
      yield* checkDrained
      yield* Deferred.await(drained).pipe(Effect.timeoutOption(o.shutdownGrace ?? "60 seconds"))
      yield* Effect.promise(() => up.current().close().catch(() => undefined))
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
    const notes = noteBound(o.maxQueuedNotifications ?? MAX_QUEUED_NOTIFICATIONS, (e) => void unsafeRun(e))
    const wire = (t: Transport) => {
      t.onmessage = (m) => {
        // A transport replaced by a reconnect is no longer read.
        if (t !== up.current()) return
        const msg = fromSdk(m)
        if (isNotification(msg) && !notes.admit()) return
        Queue.unsafeOffer(fromServer, msg)
      }
      t.onclose = () =>
        o.reconnect === undefined ? void unsafeRun(FiberSet.run(fibers, serverExited)) : void Queue.unsafeOffer(fromServer, new Dropped(t, "the connection closed"))
      t.onerror = (e) => {
        void unsafeRun(Effect.logWarning(`server transport: ${e.message}`))
        if (o.reconnect !== undefined) Queue.unsafeOffer(fromServer, new Dropped(t, e.message))
      }
    }
    // A new transport: started, `initialize` with the client's parameters, the advertisement
    // learned again, `notifications/initialized`; the pins are listed again before the next call.
    const handshake = (t: Transport): Effect.Effect<void, RpcError> =>
      Effect.gen(function*() {
        yield* Effect.tryPromise({ try: () => t.start(), catch: (e) => new RpcError({ message: `cannot start the server: ${String(e)}` }) })
        const result = yield* own("initialize", initParams ?? initializeParams("mandate-writ-mcp-proxy"))
        writ = yield* advertisedBy(held, result)
        yield* Effect.tryPromise({
          try: () => t.send(toSdk({ jsonrpc: "2.0", method: "notifications/initialized" })),
          catch: (e) => new RpcError({ message: `notifications/initialized: not sent: ${String(e)}` })
        })
        listed.stale = true
      }).pipe(Effect.provide(runtime))
    up = yield* proxyUpstream(o.server, o.reconnect, wire, handshake)
    // A handler already set is kept: a listener's session (../mcp/remote.ts) forgets itself there.
    const priorClose = o.client.onclose
    o.client.onclose = () => {
      priorClose?.()
      void unsafeRun(FiberSet.run(fibers, clientGone))
    }
    o.client.onerror = (e) => void unsafeRun(Effect.logWarning(`client transport: ${e.message}`))

    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(fromClient), onClient)))
    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(fromServer), (m) => (m instanceof Dropped ? serverDropped(m) : onServer(m)))))
    yield* FiberSet.run(fibers, Effect.forever(Effect.flatMap(Queue.take(boundCalls), onBoundCall)))
    yield* FiberSet.run(fibers, Effect.forever(Effect.zipRight(Effect.sleep(o.keepAlive ?? "15 seconds"), keepCallsAlive)))

    yield* Effect.tryPromise({ try: () => o.server.start(), catch: (e) => new RpcError({ message: `cannot start the server: ${String(e)}` }) })
    yield* Effect.tryPromise({ try: () => o.client.start(), catch: (e) => new RpcError({ message: `cannot start the client side: ${String(e)}` }) })
    const started: StartedProxy = { done: Deferred.await(done) }
    return started
  }).pipe(Effect.withSpan("writ.mcp.proxy.start"))
