// A loopback upstream for the exactly-once tests: it counts every write it receives (anything but
// GET) and answers the way the test sets: `created` (201), `failed_after_acting` (the write is
// kept, then 503), `refused` (400, nothing kept) or `held` (no answer until `release`, then 201).
// `afterAnswer` runs once an answer has been handed to the socket (the SIGKILL test uses it).
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export type Answer = "created" | "failed_after_acting" | "refused" | "held"

export const startCountingUpstream = async () => {
  const state = { answer: "created" as Answer, afterAnswer: undefined as (() => void) | undefined }
  const writes: Array<string> = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  let release: () => void = () => undefined
  const released = new Promise<void>((r) => (release = r))
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const json = (status: number, body: unknown) => {
        if (res.destroyed) return
        res.once("finish", () => state.afterAnswer?.())
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body))
      }
      if (req.method === "GET") return json(200, [])
      writes.push(`${req.method} ${new URL(req.url ?? "/", "http://127.0.0.1").pathname}`)
      const n = writes.length
      for (const w of waiters.filter((w) => w.n <= n)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null") as unknown
      switch (state.answer) {
        case "created": return json(201, { id: n, body })
        case "failed_after_acting": return json(503, { error: "stored, then the gateway failed" })
        case "refused": return json(400, { error: "refused" })
        case "held": return void released.then(() => json(201, { id: n, body }))
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as AddressInfo).port
  return {
    base: `http://127.0.0.1:${port}/api`,
    state,
    writes,
    /** Resolves once `n` writes have arrived. */
    arrived: (n: number) => new Promise<void>((resolve) => (writes.length >= n ? resolve() : waiters.push({ n, resolve }))),
    release: () => release(),
    close: () =>
      new Promise<void>((r) => {
        release()
        server.closeAllConnections()
        server.close(() => r())
      })
  }
}
