// A tiny orders API that has never heard of Writ, for the `mandate writ gate` example (docs/writ-gate.md;
// shipped built as dist/examples/orders-api.js): `POST /v1/orders` creates an order and answers
// 201 `{"id":"o-N"}`, `POST /v1/orders/{id}/cancel` cancels it and answers 200 `{"canceled":id}`,
// anything else is 404. It listens on 127.0.0.1 (port from the first argument, default 0: any free
// port), prints one line `{"url":...}` once it listens, and one line per request it receives on
// stderr, so a reader sees exactly what the gate sent it.
import { createServer } from "node:http"

const orders = new Map<string, { readonly body: string; canceled: boolean }>()

const server = createServer((req, res) => {
  let body = ""
  req.setEncoding("utf8")
  req.on("data", (chunk: string) => {
    body += chunk
  })
  req.on("end", () => {
    process.stderr.write(`orders-api: ${req.method} ${req.url} ${body}\n`)
    const answer = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(value))
    }
    const cancel = /^\/v1\/orders\/([^/]+)\/cancel$/.exec(req.url ?? "")
    if (req.method === "POST" && req.url === "/v1/orders") {
      const id = `o-${orders.size + 1}`
      orders.set(id, { body, canceled: false })
      return answer(201, { id })
    }
    if (req.method === "POST" && cancel !== null) {
      const order = orders.get(cancel[1])
      if (order === undefined) return answer(404, { error: "no such order" })
      order.canceled = true
      return answer(200, { canceled: cancel[1] })
    }
    answer(404, { error: "not found" })
  })
})

const port = Number(process.argv[2] ?? 0)
server.listen(port, "127.0.0.1", () => {
  const address = server.address()
  if (address !== null && typeof address === "object") console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }))
})
// Stops cleanly on Ctrl-C or a kill, so a shell's background job ends with the session.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)))
