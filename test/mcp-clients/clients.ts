// The three third-party MCP clients we test against, each behind one small interface so that the same
// checks (surfaces.ts, matrix.ts) run against every one of them: connect over stdio or Streamable
// HTTP, list the tools, call one, close. Each adapter uses the client's own public path, the one an
// application built on it takes (the AI SDK's tool set, LangChain's tools, the 2.x `Client`), and
// reports what reached it: the result's blocks, `structuredContent` and `_meta` where the client
// passes them on, or the error it threw with the JSON-RPC code and data it kept.
import { createMCPClient } from "@ai-sdk/mcp"
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio"
import type { ToolMessage } from "@langchain/core/messages"
import { MultiServerMCPClient } from "@langchain/mcp-adapters"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"

export interface StdioEndpoint {
  readonly _tag: "stdio"
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd: string
}

export interface HttpEndpoint {
  readonly _tag: "http"
  readonly url: string
  readonly headers: Record<string, string>
}

export type Endpoint = StdioEndpoint | HttpEndpoint

/** What reached the client of one tool call. */
export interface Outcome {
  /** The result said `isError`, or the client threw. */
  readonly isError: boolean
  /** The text blocks, or the thrown error's message. */
  readonly text: string
  /** Content block types, in order (empty when the client threw). */
  readonly types: ReadonlyArray<string>
  readonly structured?: unknown
  readonly meta?: Record<string, unknown>
  /** Set when the client threw: the JSON-RPC code and `data.reason` it kept, if it kept them. */
  readonly thrown?: { readonly code?: number; readonly reason?: string }
}

export interface ClientSession {
  readonly tools: () => Promise<ReadonlyArray<string>>
  readonly call: (name: string, args: Record<string, unknown>) => Promise<Outcome>
  readonly close: () => Promise<void>
}

export interface ThirdPartyClient {
  /** The package and its installed version, as the docs' "Tested with" sections name them. */
  readonly pkg: string
  readonly version: string
  readonly connect: (e: Endpoint) => Promise<ClientSession>
  /** The client turns a result with `isError` into a thrown error (its text in the message), and
   * keeps no JSON-RPC code or data of an error answer (only its message). LangChain does both. */
  readonly flattensErrors: boolean
  /** It can call a tool the server did not list (the AI SDK and LangChain call only listed ones). */
  readonly callsUnlisted: boolean
}

const require_ = createRequire(import.meta.url)
/** The installed version, from the package's own package.json (some packages do not export it). */
export const installedVersion = (pkg: string): string => {
  const main = require_.resolve(pkg)
  const at = main.lastIndexOf(`node_modules/${pkg}/`)
  return (JSON.parse(readFileSync(join(main.slice(0, at), "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version
}

const CALL_TIMEOUT = 60_000

interface Block { readonly type: string; readonly text?: string }
const fromResult = (r: { content?: unknown; isError?: unknown; structuredContent?: unknown; _meta?: unknown }): Outcome => {
  const blocks = (Array.isArray(r.content) ? r.content : []) as ReadonlyArray<Block>
  return {
    isError: r.isError === true,
    text: blocks.map((b) => (b.type === "text" ? b.text ?? "" : "")).join("\n"),
    types: blocks.map((b) => b.type),
    ...(r.structuredContent === undefined ? {} : { structured: r.structuredContent }),
    ...(typeof r._meta === "object" && r._meta !== null ? { meta: r._meta as Record<string, unknown> } : {})
  }
}
const fromThrown = (e: unknown): Outcome => {
  const o = (typeof e === "object" && e !== null ? e : {}) as { code?: unknown; data?: unknown; message?: unknown }
  const data = (typeof o.data === "object" && o.data !== null ? o.data : {}) as { reason?: unknown }
  return {
    isError: true,
    text: typeof o.message === "string" ? o.message : String(e),
    types: [],
    thrown: {
      ...(typeof o.code === "number" ? { code: o.code } : {}),
      ...(typeof data.reason === "string" ? { reason: data.reason } : {})
    }
  }
}

/** The Vercel AI SDK's MCP client (`@ai-sdk/mcp`): `createMCPClient`, its `tools()` as a model would
 * get them, each run through the tool's own `execute`. Stdio through its `StdioMCPTransport`. */
export const aiSdk: ThirdPartyClient = {
  pkg: "@ai-sdk/mcp",
  version: installedVersion("@ai-sdk/mcp"),
  flattensErrors: false,
  callsUnlisted: false,
  connect: async (e) => {
    const client = await createMCPClient({
      clientName: "mandate-test-ai-sdk",
      initializationOptions: { timeout: CALL_TIMEOUT },
      transport: e._tag === "stdio"
        ? new StdioMCPTransport({ command: e.command, args: [...e.args], env: e.env, cwd: e.cwd, stderr: "ignore" })
        : { type: "http", url: e.url, headers: e.headers }
    })
    return {
      tools: async () => Object.keys(await client.tools()),
      call: async (name, args) => {
        const tools = await client.tools()
        const tool = tools[name]
        if (tool === undefined) return fromThrown(new Error(`no tool ${name} in the AI SDK's tool set`))
        try {
          const execute = tool.execute as (a: unknown, o: unknown) => Promise<unknown>
          return fromResult((await execute(args, { toolCallId: "call-1", messages: [], abortSignal: AbortSignal.timeout(CALL_TIMEOUT) })) as never)
        } catch (err) {
          return fromThrown(err)
        }
      },
      close: () => client.close()
    }
  }
}

/** A LangChain tool message's string content that is one text block in JSON, if it is one. */
const asTextBlock = (content: string): (Block & { structuredContent?: unknown; meta?: unknown }) | undefined => {
  if (!content.startsWith("{")) return undefined
  try {
    const b = JSON.parse(content) as { type?: unknown; text?: unknown }
    return b.type === "text" && typeof b.text === "string" ? (b as Block) : undefined
  } catch {
    return undefined
  }
}

/** LangChain's MCP adapters (`@langchain/mcp-adapters`, on `@langchain/core`): the LangChain tools
 * `getTools()` builds, invoked with a tool call as an agent does. A result with `isError` becomes a
 * thrown `ToolException` carrying the text; `_meta` and `structuredContent` ride in the
 * ToolMessage's artifact. */
export const langchain: ThirdPartyClient = {
  pkg: "@langchain/mcp-adapters",
  version: installedVersion("@langchain/mcp-adapters"),
  flattensErrors: true,
  callsUnlisted: false,
  connect: async (e) => {
    const client = new MultiServerMCPClient({
      throwOnLoadError: true,
      useStandardContentBlocks: true,
      defaultToolTimeout: CALL_TIMEOUT,
      mcpServers: {
        mandate: e._tag === "stdio"
          ? { transport: "stdio", command: e.command, args: [...e.args], env: e.env, cwd: e.cwd, stderr: "ignore", restart: { enabled: false } }
          : { transport: "http", url: e.url, headers: e.headers, automaticSSEFallback: false, reconnect: { enabled: false } }
      }
    })
    const tools = await client.getTools()
    return {
      tools: async () => (await client.getTools()).map((t) => t.name),
      call: async (name, args) => {
        const tool = tools.find((t) => t.name === name)
        if (tool === undefined) return fromThrown(new Error(`no tool ${name} among LangChain's tools`))
        try {
          const msg = (await tool.invoke({ name, args, id: "call-1", type: "tool_call" })) as ToolMessage
          // One text block that came with `structuredContent` or `_meta` reaches the model as that
          // block in JSON, the two members inside it; they also ride in the artifact.
          const single = typeof msg.content === "string" ? asTextBlock(msg.content) : undefined
          const blocks = (single !== undefined ? [single] : typeof msg.content === "string" ? [{ type: "text", text: msg.content }] : msg.content) as ReadonlyArray<Block>
          const artifact = (Array.isArray(msg.artifact) ? msg.artifact : []) as ReadonlyArray<{ type: string; data?: unknown }>
          const meta = single?.meta ?? artifact.find((a) => a.type === "mcp_meta")?.data
          const structured = single?.structuredContent ?? artifact.find((a) => a.type === "mcp_structured_content")?.data
          return {
            isError: msg.status === "error",
            text: blocks.map((b) => (b.type === "text" ? b.text ?? "" : "")).join("\n"),
            types: blocks.map((b) => b.type),
            ...(structured === undefined ? {} : { structured }),
            ...(typeof meta === "object" && meta !== null ? { meta: meta as Record<string, unknown> } : {})
          }
        } catch (err) {
          return fromThrown(err)
        }
      },
      close: () => client.close()
    }
  }
}

/** The MCP SDK 2.x client (`@modelcontextprotocol/client`): `Client` with its stdio and Streamable
 * HTTP transports, `callTool` as an application calls it. */
export const sdk2: ThirdPartyClient = {
  pkg: "@modelcontextprotocol/client",
  version: installedVersion("@modelcontextprotocol/client"),
  flattensErrors: false,
  callsUnlisted: true,
  connect: async (e) => {
    const client = new Client({ name: "mandate-test-sdk2", version: "0.1.0" })
    await client.connect(
      e._tag === "stdio"
        ? new StdioClientTransport({ command: e.command, args: [...e.args], env: e.env, cwd: e.cwd, stderr: "ignore" })
        : new StreamableHTTPClientTransport(new URL(e.url), { requestInit: { headers: e.headers } }),
      { timeout: CALL_TIMEOUT }
    )
    return {
      tools: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name, args) => {
        try {
          return fromResult(await client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT }) as never)
        } catch (err) {
          return fromThrown(err)
        }
      },
      close: () => client.close()
    }
  }
}
