// A real MCP server over Streamable HTTP for the reconnect tests (gate-reconnect, proxy-reconnect):
// one SDK server transport per session, `connect` wiring a fresh server to each. `stop` drops every
// connection and session (the upstream "goes away"), and `listen` on the same port brings it back.
import { randomUUID } from "node:crypto"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"

export const sessionHttpServer = (connect: (transport: StreamableHTTPServerTransport) => Promise<void>) => {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const http: HttpServer = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown
      const sid = req.headers["mcp-session-id"]
      let t = typeof sid === "string" ? sessions.get(sid) : undefined
      if (t === undefined) {
        if (!isInitializeRequest(body)) return void res.writeHead(404).end()
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => void sessions.set(id, transport) })
        await connect(transport)
        t = transport
      }
      await t.handleRequest(req, res, body)
    })
  })
  return {
    listen: (port: number) => new Promise<number>((r) => http.listen(port, "127.0.0.1", () => r((http.address() as AddressInfo).port))),
    stop: () => new Promise<void>((r) => {
      sessions.clear()
      http.closeAllConnections()
      http.close(() => r())
    })
  }
}
