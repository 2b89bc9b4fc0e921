// The bounded stdio transport (src/bind/mcp/stdio.ts) under floods, in process with a real MCP
// server on it: a 20 MB line gets a JSON-RPC error naming the cap and the session goes on; a line
// that is not JSON gets a parse error; 20,000 notifications ahead of a request don't stop it
// being answered, and stdin is paused while the queue is full rather than the queue growing.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PassThrough } from "node:stream"
import { BoundedStdioTransport } from "../../src/bind/mcp/stdio.js"
import { shopService } from "../../src/examples/shop.js"
import { bridgeOver, grantOf, principalKey } from "./inproc-bridge.js"

const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }
const line = (m: unknown) => JSON.stringify(m) + "\n"

/** A server on the transport over two pipes; the replies as parsed lines, awaited by id. */
const wired = (options: { maxQueue?: number } = {}) =>
  Effect.gen(function* () {
    const grant = yield* grantOf([{ svc: ["shop.example"] }])
    const b = yield* bridgeOver([shopService([principalKey])], [grant])
    const input = new PassThrough()
    const output = new PassThrough()
    const discarded: Array<string> = []
    let pauses = 0
    const pause = input.pause.bind(input)
    input.pause = () => { pauses++; return pause() }
    const transport = new BoundedStdioTransport(input, output, { ...options, onDiscard: (w) => discarded.push(w) })
    const server = b.built.newServer()
    yield* Effect.acquireRelease(Effect.promise(() => server.connect(transport)), () => Effect.promise(() => server.close()))
    const replies: Array<Record<string, unknown>> = []
    let rest = ""
    const waiters: Array<() => void> = []
    output.on("data", (c: Buffer) => {
      rest += c.toString()
      let i
      while ((i = rest.indexOf("\n")) >= 0) {
        replies.push(JSON.parse(rest.slice(0, i)) as Record<string, unknown>)
        rest = rest.slice(i + 1)
      }
      for (const w of waiters.splice(0)) w()
    })
    const reply = (id: unknown) =>
      Effect.async<Record<string, unknown>>((resume) => {
        const check = () => {
          const r = replies.find((x) => x.id === id)
          if (r !== undefined) resume(Effect.succeed(r))
          else waiters.push(check)
        }
        check()
      })
    return { input, reply, replies, discarded, pauses: () => pauses }
  })

describe("the bounded stdio transport", () => {
  it.scoped("a 20 MB line is refused by name and the session answers the next request; a non-JSON line too", () =>
    Effect.gen(function* () {
      const w = yield* wired()
      w.input.write(line(init))
      expect((yield* w.reply(1)).result).toBeDefined()
      w.input.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }))
      // Written in 1 MiB pieces, as a pipe delivers it: never held whole.
      const mib = Buffer.alloc(1024 * 1024, 0x61)
      for (let i = 0; i < 20; i++) w.input.write(mib)
      w.input.write("\n")
      w.input.write("{ nope\n")
      w.input.write(line({ jsonrpc: "2.0", id: 2, method: "tools/list" }))
      const tools = yield* w.reply(2)
      expect(((tools.result as { tools: Array<unknown> }).tools).length).toBe(5)
      const errors = w.replies.filter((r) => r.id === null).map((r) => (r.error as { code: number; message: string }))
      expect(errors).toEqual([{ code: -32600, message: "a message line over 4194304 bytes was discarded" }, { code: -32700, message: "the line is not JSON" }])
      expect(w.discarded).toEqual(["a message line over 4194304 bytes was discarded"])
    }))

  it.scoped("20,000 notifications ahead of a request: the request is answered; stdin was paused while the queue was full", () =>
    Effect.gen(function* () {
      const w = yield* wired({ maxQueue: 256 })
      w.input.write(line(init))
      yield* w.reply(1)
      const flood = line({ jsonrpc: "2.0", method: "notifications/initialized" }).repeat(20_000)
      w.input.write(flood)
      w.input.write(line({ jsonrpc: "2.0", id: 3, method: "tools/list" }))
      expect(((yield* w.reply(3)).result as { tools: Array<unknown> }).tools.length).toBe(5)
      expect(w.pauses()).toBeGreaterThan(0)
    }))
})
