// A loopback upstream answering in each provider's shape, streamed or not; it counts the calls
// it receives and can be told to stream more than max_tokens, send no usage, fail after partial
// output or hold its answers until released.
import * as http from "node:http"

export interface Behaviour {
  /** Text deltas in a streamed answer. */
  chunks: number
  usage: boolean
  /** Destroy the socket after this many chunks (a 500 after partial output). */
  failAfter: number | undefined
  /** Answers wait for this promise. */
  hold: Promise<void> | undefined
  inputTokens: number
  outputTokens: number
  /** A stream stops after this many chunks until `resume` settles (a call in flight, for a kill). */
  pauseAfter: number | undefined
  resume: Promise<void> | undefined
}

export interface FakeUpstream {
  readonly url: string
  readonly calls: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }>
  readonly behaviour: Behaviour
  readonly close: () => Promise<void>
}

const sse = (res: http.ServerResponse, data: unknown, event?: string) =>
  res.write(`${event !== undefined ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`)

export const startFake = async (): Promise<FakeUpstream> => {
  const calls: FakeUpstream["calls"] = []
  const behaviour: Behaviour = { chunks: 3, usage: true, failAfter: undefined, hold: undefined, inputTokens: 10, outputTokens: 5, pauseAfter: undefined, resume: undefined }
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", async () => {
      const body = Buffer.concat(parts).toString()
      calls.push({ path: req.url ?? "", headers: req.headers, body })
      if (behaviour.hold !== undefined) await behaviour.hold
      const b = behaviour
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ object: "list", data: [{ id: "gpt-4o-mini", object: "model", created: 0, owned_by: "fake" }] }))
      }
      const json = JSON.parse(body) as { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } }
      const model = json.model
      const stream = json.stream === true
      if (!stream) {
        res.writeHead(200, { "content-type": "application/json" })
        if (req.url === "/v1/chat/completions") {
          return res.end(JSON.stringify({
            id: "chatcmpl-1", object: "chat.completion", created: 0, model,
            choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop", logprobs: null }],
            ...(b.usage ? { usage: { prompt_tokens: b.inputTokens, completion_tokens: b.outputTokens, total_tokens: b.inputTokens + b.outputTokens } } : {})
          }))
        }
        if (req.url === "/v1/responses") {
          return res.end(JSON.stringify({
            id: "resp_1", object: "response", created_at: 0, model, status: "completed",
            output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "hello", annotations: [] }] }],
            ...(b.usage ? { usage: { input_tokens: b.inputTokens, output_tokens: b.outputTokens, total_tokens: b.inputTokens + b.outputTokens } } : {})
          }))
        }
        return res.end(JSON.stringify({
          id: "msg_1", type: "message", role: "assistant", model, content: [{ type: "text", text: "hello" }], stop_reason: "end_turn", stop_sequence: null,
          usage: { input_tokens: b.inputTokens, output_tokens: b.outputTokens }
        }))
      }
      res.writeHead(200, { "content-type": "text/event-stream" })
      const text = "word ".repeat(4)
      for (let i = 0; i < b.chunks; i++) {
        if (b.failAfter !== undefined && i === b.failAfter) return res.destroy()
        if (b.pauseAfter !== undefined && i === b.pauseAfter) await b.resume
        if (req.url === "/v1/chat/completions") sse(res, { id: "c1", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })
        else if (req.url === "/v1/responses") sse(res, { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: text, sequence_number: i }, "response.output_text.delta")
        else {
          if (i === 0) {
            sse(res, { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: b.inputTokens, output_tokens: 1 } } }, "message_start")
            sse(res, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start")
          }
          sse(res, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta")
        }
        await new Promise((r) => setImmediate(r))
      }
      if (req.url === "/v1/chat/completions") {
        if (b.usage) sse(res, { id: "c1", object: "chat.completion.chunk", created: 0, model, choices: [], usage: { prompt_tokens: b.inputTokens, completion_tokens: b.outputTokens, total_tokens: b.inputTokens + b.outputTokens } })
        res.write("data: [DONE]\n\n")
      } else if (req.url === "/v1/responses") {
        sse(res, {
          type: "response.completed", sequence_number: 99,
          response: { id: "resp_1", object: "response", created_at: 0, model, status: "completed", output: [], ...(b.usage ? { usage: { input_tokens: b.inputTokens, output_tokens: b.outputTokens, total_tokens: b.inputTokens + b.outputTokens } } : {}) }
        }, "response.completed")
      } else {
        sse(res, { type: "content_block_stop", index: 0 }, "content_block_stop")
        if (b.usage) sse(res, { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: b.outputTokens } }, "message_delta")
        sse(res, { type: "message_stop" }, "message_stop")
      }
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const addr = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${addr.port}`,
    calls,
    behaviour,
    close: () => new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
  }
}

/**
 * Sends `n` requests at once with the fake's answers held until every request has either reached
 * it or been answered (refused) by the gateway, then releases them: so every reserve happens
 * before any settlement. Resolves with how many reached the upstream, once all have ended.
 */
export const heldBurst = async (fake: FakeUpstream, n: number, send: (i: number) => Promise<unknown>): Promise<number> => {
  let release!: () => void
  fake.behaviour.hold = new Promise<void>((r) => (release = r))
  const before = fake.calls.length
  let ended = 0
  const all = Array.from({ length: n }, (_, i) => send(i).finally(() => { ended++ }))
  while (ended + (fake.calls.length - before) < n) await new Promise((r) => setTimeout(r, 5))
  release()
  await Promise.all(all)
  fake.behaviour.hold = undefined
  return fake.calls.length - before
}
