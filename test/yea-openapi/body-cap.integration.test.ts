// The OpenAPI adapter's upstream calls read a response body as it arrives and stop at the bound
// (src/bind/yea-openapi/upstream.ts): a loopback API that streams far more than the bound gets the
// connection closed soon after the bound, the call is `unavailable` naming the size, and the next
// call is answered as before.
import { Effect, Either } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { upstreamLayer } from "../../src/bind/yea-openapi/index.js"
import { Upstream } from "../../src/yea/openapi/index.js"
import { FLOOD_TOTAL, type FloodCount, replyFlood } from "../support/reply-flood.js"

const TOTAL = FLOOD_TOTAL

/** A loopback API: `/flood` streams TOTAL bytes (chunked, no length) with backpressure, counting what it wrote. */
const start = () =>
  new Promise<{ base: string; flood: FloodCount; close: () => Promise<void> }>((resolve) => {
    const { count: flood, pump } = replyFlood()
    const server = createServer((req, res) => {
      if (req.url === "/flood") return void pump(res)
      res.writeHead(200, { "content-type": "application/json" }).end(`{"ok":true}`)
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        base: `http://127.0.0.1:${port}`,
        flood,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()) })
      })
    })
  })

describe("the OpenAPI adapter's upstream body bound", () => {
  it.effect("stops reading a body that streams far past the bound, refuses it, and serves the next call", () =>
    Effect.gen(function*() {
      const api = yield* Effect.acquireRelease(Effect.promise(start), (a) => Effect.promise(a.close))
      const up = yield* Upstream
      const r = yield* Effect.either(up.send({ method: "GET", url: `${api.base}/flood` }))
      expect(Either.isLeft(r) ? [r.left.reason, /too large/.test(r.left.message)] : r).toEqual(["unavailable", true])
      // The server's writes end once the connection is closed: what it managed to write is what
      // the socket buffers took beyond the bound, far below the body.
      yield* Effect.promise(() => api.flood.done)
      expect(api.flood.written).toBeLessThan(TOTAL / 4)
      const next = yield* up.send({ method: "GET", url: `${api.base}/small` })
      expect(next).toEqual({ status: 200, body: { ok: true } })
    }).pipe(Effect.scoped, Effect.provide(upstreamLayer({ maxBody: 64 * 1024 }))))

  it.effect("refuses a declared length over the bound before reading it", () =>
    Effect.gen(function*() {
      const server = createServer((_req, res) => { res.writeHead(200, { "content-length": String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024, 0x20)) })
      yield* Effect.acquireRelease(Effect.async<void>((k) => { server.listen(0, "127.0.0.1", () => k(Effect.void)) }), () =>
        Effect.async<void>((k) => { server.closeAllConnections(); server.close(() => k(Effect.void)) }))
      const up = yield* Upstream
      const r = yield* Effect.either(up.send({ method: "GET", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }))
      expect(Either.isLeft(r) ? r.left.reason : r).toBe("unavailable")
    }).pipe(Effect.scoped, Effect.provide(upstreamLayer())))
})
