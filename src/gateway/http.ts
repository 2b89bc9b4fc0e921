// The gateway's HTTP plumbing, apart from the life of a call (server.ts): which request headers go
// upstream (a short list: the upstream's host is never the client's to choose), which response
// headers come back, the client's key, the capped body read, and the upstream request itself.
import { createHash } from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import type { Provider } from "./wire/types.js"

/** Request headers passed upstream; everything else (Host, X-Forwarded-*, cookies, the key) is dropped. */
const FORWARDED = ["content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta", "idempotency-key"]
/** Response headers not relayed (hop-by-hop, or recomputed by node:http). */
const NOT_RELAYED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "proxy-authenticate", "upgrade", "trailer", "te"])

export const sha256Hex = (s: string): string => createHash("sha256").update(s).digest("hex")

export const keyOf = (req: http.IncomingMessage): string | undefined => {
  const auth = req.headers.authorization
  if (typeof auth === "string" && /^bearer /i.test(auth)) {
    const k = auth.slice(7).trim()
    if (k.length > 0) return k
  }
  return headerOf(req, "x-api-key")
}

/** A request header given once and not empty (node joins repeated ones into a list). */
export const headerOf = (req: http.IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name]
  return typeof v === "string" && v !== "" ? v : undefined
}

export interface Upstream {
  readonly url: URL
  readonly agent: http.Agent
}

export const upstreamOf = (base: string | undefined): Upstream | undefined => {
  if (base === undefined) return undefined
  const url = new URL(base.replace(/\/+$/, "").replace(/\/v1$/, ""))
  const agent = url.protocol === "https:" ? new https.Agent({ keepAlive: true, maxSockets: 256 }) : new http.Agent({ keepAlive: true, maxSockets: 256 })
  return { url, agent }
}

export const readBody = (req: http.IncomingMessage, max: number): Promise<Uint8Array | "too_large" | "aborted"> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let over = false
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > max) {
        if (!over) {
          over = true
          resolve("too_large")
        }
        return
      }
      chunks.push(c)
    })
    req.on("end", () => {
      if (!over) resolve(Buffer.concat(chunks))
    })
    req.on("aborted", () => resolve("aborted"))
    req.on("error", () => resolve("aborted"))
  })

export const headersFor = (req: http.IncomingMessage, provider: Provider, upstreamKey: string | undefined): http.OutgoingHttpHeaders => {
  const h: http.OutgoingHttpHeaders = {}
  for (const name of FORWARDED) {
    const v = req.headers[name]
    if (typeof v === "string") h[name] = v
  }
  if (upstreamKey !== undefined) {
    if (provider === "anthropic") h["x-api-key"] = upstreamKey
    else h.authorization = `Bearer ${upstreamKey}`
  }
  // Uncompressed answers: the gateway reads usage from them.
  h["accept-encoding"] = "identity"
  return h
}

export const relayHeaders = (ures: http.IncomingMessage): http.OutgoingHttpHeaders => {
  const h: http.OutgoingHttpHeaders = {}
  for (const [k, v] of Object.entries(ures.headers)) if (!NOT_RELAYED.has(k) && v !== undefined) h[k] = v
  return h
}

export const request = (up: Upstream, method: string, path: string, headers: http.OutgoingHttpHeaders, onResponse: (res: http.IncomingMessage) => void) => {
  const mod = up.url.protocol === "https:" ? https : http
  const base = up.url.pathname.replace(/\/+$/, "")
  return mod.request({
    protocol: up.url.protocol,
    hostname: up.url.hostname,
    port: up.url.port,
    method,
    path: `${base}${path}`,
    headers,
    agent: up.agent
  }, onResponse)
}
