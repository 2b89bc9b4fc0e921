// A small REST server for the OpenAPI adapter's tests (fixtures/notes.json), on 127.0.0.1 only. It
// records every request it serves, so a test can see that a proposal sent nothing upstream, and
// the authorization header each came with.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Note {
  readonly id: number
  readonly text: string
  readonly tag?: string
}

export const startNotes = async () => {
  const notes = new Map<number, Note>([[1, { id: 1, text: "buy milk", tag: "home" }]])
  const requests: Array<string> = []
  const authorizations: Array<string | undefined> = []
  let next = 2
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      requests.push(`${req.method} ${url.pathname}${url.search}`)
      authorizations.push(req.headers.authorization)
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(body === undefined ? "" : JSON.stringify(body))
      }
      const m = /^\/api\/notes(?:\/(\d+))?$/.exec(url.pathname)
      if (!m) return json(404, { error: "no such path" })
      const id = m[1] === undefined ? undefined : Number(m[1])
      if (id === undefined && req.method === "GET") {
        const tag = url.searchParams.get("tag")
        return json(200, [...notes.values()].filter((n) => tag === null || n.tag === tag))
      }
      if (id === undefined && req.method === "POST") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { text?: unknown; tag?: unknown }
        if (typeof body.text !== "string") return json(400, { error: "text is required" })
        const note: Note = { id: next++, text: body.text, ...(typeof body.tag === "string" ? { tag: body.tag } : {}) }
        notes.set(note.id, note)
        return json(201, note)
      }
      if (id !== undefined && req.method === "GET") return notes.has(id) ? json(200, notes.get(id)) : json(404, { error: "no such note" })
      if (id !== undefined && req.method === "DELETE") return notes.delete(id) ? json(204, undefined) : json(404, { error: "no such note" })
      return json(405, { error: "method not allowed" })
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as AddressInfo).port
  return { base: `http://127.0.0.1:${port}/api`, notes, requests, authorizations, close: () => new Promise<void>((r) => server.close(() => r())) }
}
