// Connections per peer, for every listener (Writ section 12, Denial of service; YEA SPEC §2.3's
// bounds). A listener's cap on open connections alone lets one client that opens that many idle
// sockets lock every other client out. So each peer (its remote address; an IPv6 peer by its /64,
// which one host is routinely given whole) may hold at most a share of the listener's connections,
// and that share is always below the listener's own cap: one peer alone can never fill it, and
// room is left for peers that hold none. A peer over its share has its new socket refused at once.
import type * as Http from "node:http"
import type * as Net from "node:net"

/** The share of a listener's cap one peer may hold when none is given: a quarter. */
export const defaultPerPeer = (maxConnections: number): number => Math.max(1, Math.floor(maxConnections / 4))

/** The per-peer cap in force: `maxPerPeer` (default a quarter of the cap), kept below the
 * listener's cap so that one peer never reaches it (a cap of 1 leaves no room below it). */
export const perPeerCap = (maxConnections: number, maxPerPeer?: number): number => {
  const global = Math.max(1, Math.floor(maxConnections))
  const asked = Math.max(1, Math.floor(maxPerPeer ?? defaultPerPeer(global)))
  return global > 1 ? Math.min(asked, global - 1) : 1
}

/** The peer a remote address belongs to: the IPv4 address (also when IPv4-mapped), or an IPv6
 * address's /64 prefix. */
export const peerKey = (address: string | undefined): string => {
  if (address === undefined || address === "") return "?"
  const a = address.toLowerCase()
  if (a.startsWith("::ffff:") && a.includes(".")) return a.slice(7)
  if (!a.includes(":")) return a
  const [head, tail = ""] = a.split("%")[0].split("::")
  const left = head === "" ? [] : head.split(":")
  const right = a.includes("::") && tail !== "" ? tail.split(":") : []
  const groups = a.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`
}

export type Admission =
  | { readonly _tag: "admitted"; readonly release: () => void }
  /** `peer`: the peer holds its share (`cap`); `full`: the listener holds its cap. */
  | { readonly _tag: "refused"; readonly reason: "peer" | "full"; readonly cap: number }

export interface PeerConnections {
  /** Counts a new connection from `address` in, or refuses it. `release` is idempotent. */
  readonly admit: (address: string | undefined) => Admission
  /** Connections open now. */
  readonly open: () => number
}

/** The accounting of one listener: `maxConnections` in all, `perPeerCap(...)` per peer. */
export const peerConnections = (maxConnections: number, maxPerPeer?: number): PeerConnections => {
  const global = Math.max(1, Math.floor(maxConnections))
  const perPeer = perPeerCap(global, maxPerPeer)
  const held = new Map<string, number>()
  let open = 0
  return {
    open: () => open,
    admit: (address) => {
      const key = peerKey(address)
      const mine = held.get(key) ?? 0
      if (open >= global) return { _tag: "refused", reason: "full", cap: global }
      if (mine >= perPeer) return { _tag: "refused", reason: "peer", cap: perPeer }
      open++
      held.set(key, mine + 1)
      let released = false
      return {
        _tag: "admitted",
        release: () => {
          if (released) return
          released = true
          open--
          const n = (held.get(key) ?? 1) - 1
          if (n <= 0) held.delete(key)
          else held.set(key, n)
        }
      }
    }
  }
}

/**
 * Puts `accounting` in front of a Node server's connections: an admitted socket is released when
 * it closes; a refused one is handed to `refuse` and never reaches the server (an HTTP server never
 * parses a byte of it). `refuse` answers and closes it; see `refuseSocket`.
 */
export const capConnections = (
  server: Net.Server,
  accounting: PeerConnections,
  refuse: (socket: Net.Socket, refusal: Extract<Admission, { _tag: "refused" }>) => void
): void => {
  const emit = server.emit.bind(server)
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    if (event === "connection") {
      const socket = args[0] as Net.Socket
      const a = accounting.admit(socket.remoteAddress)
      if (a._tag === "refused") {
        refuse(socket, a)
        return true
      }
      socket.once("close", a.release)
    }
    return emit(event, ...args)
  }) as typeof server.emit
}

/** Answers a refused socket with `bytes` (none: closes it unanswered), discarding what it sends,
 * and destroys it once the answer is flushed, so a refused socket holds nothing for long. */
export const refuseSocket = (socket: Net.Socket, bytes?: string | Uint8Array): void => {
  socket.on("error", () => socket.destroy())
  socket.resume()
  if (bytes === undefined) socket.destroy()
  else socket.end(bytes, () => socket.destroy())
}

/**
 * Closes a kept-alive connection that sends no complete request within `idleMs` of its previous
 * answer (section 12). Node's own keep-alive timer restarts on any byte, so a blank line now and
 * then (which HTTP/1.1 lets a client send before a request) would hold a connection forever.
 */
export const closeIdleKeepAlive = (server: Http.Server, idleMs: number): void => {
  const state = new WeakMap<object, { inFlight: number; timer: ReturnType<typeof setTimeout> | undefined }>()
  server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const socket = req.socket
    let s = state.get(socket)
    if (s === undefined) {
      const fresh = { inFlight: 0, timer: undefined as ReturnType<typeof setTimeout> | undefined }
      state.set(socket, fresh)
      socket.once("close", () => clearTimeout(fresh.timer))
      s = fresh
    }
    const own = s
    if (own.timer !== undefined) clearTimeout(own.timer)
    own.timer = undefined
    own.inFlight++
    res.once("close", () => {
      own.inFlight--
      if (own.inFlight > 0 || socket.destroyed) return
      own.timer = setTimeout(() => {
        if (own.inFlight === 0) socket.destroy()
      }, idleMs)
      own.timer.unref()
    })
  })
}
