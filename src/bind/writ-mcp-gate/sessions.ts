// The gate's sessions over its one upstream (docs/mcp-gate.md, "Serving remote clients"): with
// `--listen` every client session has an SDK Server of its own, while the plain server behind the
// gate is one connection. What the server sends on its own is routed here, installed once on the
// upstream Client, so no session sees what belongs to another:
//
// - `notifications/resources/updated` goes only to the sessions that subscribed to its URI through
//   the gate (MCP server/resources, "Subscriptions": updates are for subscribers); a URI no session
//   subscribed to is reported to none. A subscription is the session's: its `unsubscribe`, or its
//   end, unsubscribes the server only when no other session still holds that URI.
// - `notifications/tools/list_changed` marks every session's pins stale and reaches every session;
//   other notifications (list changes, logging) reach every initialized session: they name no item
//   a grant covers.
// - the server's requests (sampling, elicitation, roots) go to the one session with tool calls in
//   flight, or to the only session there is; when several sessions have calls in flight, the
//   request cannot be tied to one of them (MCP gives a server's request no reference to the call
//   it is for), so it is refused rather than asked of the wrong person.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CreateMessageRequestSchema, CreateMessageResultSchema, ElicitRequestSchema, ElicitResultSchema, EmptyResultSchema, ErrorCode,
  ListRootsRequestSchema, ListRootsResultSchema, McpError
} from "@modelcontextprotocol/sdk/types.js"

/** One client session of the gate, as the router sees it. */
export interface GateSession {
  readonly server: Server
  /** Whether the client has sent `notifications/initialized` (before it, nothing but pings). */
  readonly ready: () => boolean
  /** Resolves once it has. */
  readonly whenReady: () => Promise<void>
  /** Bound calls of this session in flight. */
  open: number
  /** URIs this session subscribed to. */
  readonly subscriptions: Set<string>
  /** The server's tools changed: re-list before comparing pins. */
  readonly stale: () => void
  /** A request of the server's relayed to this session's client (its time limit and keep-alive). */
  readonly relay: <A>(send: (timeout: number) => Promise<A>) => Promise<A>
}

export interface GateSessions {
  /** Adds a session; the function returned removes it (and unsubscribes what only it held). */
  readonly add: (session: GateSession) => () => Promise<void>
  readonly subscribe: (session: GateSession, uri: string, signal: AbortSignal) => Promise<unknown>
  readonly unsubscribe: (session: GateSession, uri: string, signal: AbortSignal) => Promise<unknown>
  readonly size: () => number
}

/** The router over `up`; its handlers are installed on `up` once, here. */
export const gateSessions = (up: Client): GateSessions => {
  const sessions = new Set<GateSession>()
  const heldElsewhere = (uri: string, except: GateSession) => [...sessions].some((s) => s !== except && s.subscriptions.has(uri))

  const target = (): GateSession => {
    const all = [...sessions]
    const busy = all.filter((s) => s.open > 0)
    const chosen = busy.length === 1 ? busy[0] : busy.length === 0 && all.length === 1 ? all[0] : undefined
    if (chosen === undefined) {
      throw new McpError(ErrorCode.InternalError, `the gate cannot tell which of its ${all.length} sessions this request is for (${busy.length} with calls in flight)`)
    }
    return chosen
  }

  up.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const s = target()
    await s.whenReady()
    return s.relay((timeout) => s.server.request(request, CreateMessageResultSchema, { signal: extra.signal, timeout }))
  })
  up.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const s = target()
    await s.whenReady()
    return s.relay((timeout) => s.server.request(request, ElicitResultSchema, { signal: extra.signal, timeout }))
  })
  up.setRequestHandler(ListRootsRequestSchema, async (request, extra) => {
    const s = target()
    await s.whenReady()
    return s.server.request(request, ListRootsResultSchema, { signal: extra.signal })
  })
  up.fallbackNotificationHandler = async (n) => {
    if (n.method === "notifications/tools/list_changed") for (const s of sessions) s.stale()
    const uri = n.method === "notifications/resources/updated" ? String((n.params as { uri?: unknown } | undefined)?.uri) : undefined
    for (const s of [...sessions]) {
      if (!s.ready() || (uri !== undefined && !s.subscriptions.has(uri))) continue
      await s.server.notification(n as never).catch(() => undefined)
    }
  }

  const unsubscribeUp = (uri: string, signal?: AbortSignal) =>
    up.request({ method: "resources/unsubscribe", params: { uri } }, EmptyResultSchema, signal === undefined ? {} : { signal })

  return {
    add: (session) => {
      sessions.add(session)
      return async () => {
        sessions.delete(session)
        for (const uri of session.subscriptions) if (!heldElsewhere(uri, session)) await unsubscribeUp(uri, AbortSignal.timeout(5000)).catch(() => undefined)
        session.subscriptions.clear()
      }
    },
    subscribe: async (session, uri, signal) => {
      // Held before it is sent: a server may report a change before it answers the subscribe.
      const had = session.subscriptions.has(uri)
      session.subscriptions.add(uri)
      try {
        return await up.request({ method: "resources/subscribe", params: { uri } }, EmptyResultSchema, { signal })
      } catch (e) {
        if (!had) session.subscriptions.delete(uri)
        throw e
      }
    },
    unsubscribe: async (session, uri, signal) => {
      session.subscriptions.delete(uri)
      return heldElsewhere(uri, session) ? {} : unsubscribeUp(uri, signal)
    },
    size: () => sessions.size
  }
}
