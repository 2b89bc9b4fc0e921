// A bounded stdio transport for the MCP servers here (`yea mcp`, `yea mcp-example`). The SDK's
// own closes the session when a line passes its buffer cap, so one oversized line from a client
// ended the process without a word. This one keeps the session:
//
// - a line longer than `maxLine` bytes is discarded as it streams (never buffered whole), the
//   client gets a JSON-RPC error (-32600, id null) naming the cap, and reading goes on at the
//   next newline;
// - a line that is not JSON-RPC gets -32700 (parse error) and the session goes on;
// - messages wait in a queue of at most `maxQueue`; while it is full, stdin is paused (the
//   client's writes back up in the pipe) rather than the queue growing, and the queue is drained
//   a batch at a time, yielding between batches, so a notification flood can't starve the
//   answers to requests queued behind it.
//
// JSON-RPC 2.0 §5.1: -32700 parse error, -32600 invalid request; `id` null when it can't be known.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

export const MAX_LINE = 4 * 1024 * 1024
export const MAX_QUEUE = 1024
const BATCH = 64

export interface BoundedStdioOptions {
  readonly maxLine?: number
  readonly maxQueue?: number
  /** Told once per discarded line, with why (the bin writes it to stderr). */
  readonly onDiscard?: (why: string) => void
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private parts: Array<Buffer> = []
  private size = 0
  private skipping = false
  private readonly queue: Array<JSONRPCMessage> = []
  private draining = false
  private closed = false
  private readonly maxLine: number
  private readonly maxQueue: number

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly options: BoundedStdioOptions = {}
  ) {
    this.maxLine = options.maxLine ?? MAX_LINE
    this.maxQueue = options.maxQueue ?? MAX_QUEUE
  }

  private readonly onData = (chunk: Buffer | string) => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    while (buf.length > 0) {
      const nl = buf.indexOf(0x0a)
      const piece = nl === -1 ? buf : buf.subarray(0, nl)
      if (!this.skipping) {
        if (this.size + piece.length > this.maxLine) {
          // Over the cap: drop what is held and the rest of this line as it streams in.
          this.skipping = true
          this.parts = []
          this.size = 0
        } else {
          this.parts.push(piece)
          this.size += piece.length
        }
      }
      if (nl === -1) break
      if (this.skipping) {
        this.skipping = false
        const why = `a message line over ${this.maxLine} bytes was discarded`
        this.options.onDiscard?.(why)
        this.reply(-32600, why)
      } else {
        const line = Buffer.concat(this.parts).toString("utf8")
        this.parts = []
        this.size = 0
        this.accept(line)
      }
      buf = buf.subarray(nl + 1)
    }
  }

  private readonly onEnd = () => {
    void this.close()
  }

  private readonly onError = (e: Error) => {
    this.onerror?.(e)
  }

  private accept(line: string) {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line
    if (text.trim() === "") return
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      this.reply(-32700, "the line is not JSON")
      return
    }
    const message = JSONRPCMessageSchema.safeParse(parsed)
    if (!message.success) {
      this.reply(-32600, "not a JSON-RPC 2.0 message")
      return
    }
    this.queue.push(message.data)
    if (this.queue.length >= this.maxQueue) this.input.pause()
    this.drain()
  }

  private drain() {
    if (this.draining) return
    this.draining = true
    const step = () => {
      for (let i = 0; i < BATCH && this.queue.length > 0 && !this.closed; i++) this.onmessage?.(this.queue.shift()!)
      if (this.queue.length < this.maxQueue / 2 && !this.closed) this.input.resume()
      if (this.queue.length > 0 && !this.closed) setImmediate(step)
      else this.draining = false
    }
    setImmediate(step)
  }

  private reply(code: number, message: string) {
    // JSON-RPC 2.0 (section 5) answers a request it could not read with id null; the SDK's message
    // type has no such id, so the cast says what the spec allows.
    void this.send({ jsonrpc: "2.0", id: null, error: { code, message } } as unknown as JSONRPCMessage).catch(() => undefined)
  }

  async start(): Promise<void> {
    this.input.on("data", this.onData)
    this.input.on("end", this.onEnd)
    this.input.on("error", this.onError)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve()
      if (this.output.write(JSON.stringify(message) + "\n")) resolve()
      else this.output.once("drain", () => resolve())
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.input.off("data", this.onData)
    this.input.off("end", this.onEnd)
    this.input.off("error", this.onError)
    this.queue.length = 0
    this.onclose?.()
  }
}
