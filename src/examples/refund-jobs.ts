// A whole MCP server with one job tool, `refund`, under YEA's approval contract (docs/yea-mcp.md;
// shipped built as dist/examples/refund-jobs.js). A refund is planned, not done: the plan runs only
// inside the person's signed policy (a `pg1.` grant from the pinned principal to this server's key
// naming the tool), once, and returns a receipt; outside it the call says why and runs nothing.
//
//   node refund-jobs.js SERVER_KEY --id                       prints this server's key (ed25519:...)
//   node refund-jobs.js SERVER_KEY PRINCIPAL_KEY POLICY_FILE  serves MCP on stdio
//
// SERVER_KEY is a key file as `mandate keygen` writes it; POLICY_FILE holds the grant and is read
// on every call, so a new grant applies without a restart.
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Console, Effect, Layer } from "effect"
import { z } from "zod"
import { readSeedFile } from "../app/inputs.js"
import { makeApprovals } from "../bind/mcp/context.js"
import { job } from "../bind/mcp/job.js"
import { RandomBytes } from "../kernel/index.js"
import { memoryApprovalStore, randomCodecLayer } from "../yea/approval/index.js"
import { keyFromSeed } from "../yea/keys.js"

const refunded: Array<string> = []

/** Serves on stdio until the client closes its input and every request it sent is answered, so a
 * client that pipes its requests and closes still gets every answer. */
const serveStdio = (server: McpServer) =>
  Effect.async<void>((resume) => {
    const transport = new StdioServerTransport()
    let open = 0
    let ended = false
    const settle = () => {
      if (ended && open === 0) void server.close().then(() => resume(Effect.void))
    }
    void server.connect(transport).then(() => {
      const receive = transport.onmessage!
      transport.onmessage = (message: JSONRPCMessage) => {
        if ("method" in message && "id" in message) open++
        receive(message)
      }
      const send = transport.send.bind(transport)
      transport.send = async (message: JSONRPCMessage) => {
        await send(message)
        if (!("method" in message) && "id" in message) {
          open--
          settle()
        }
      }
      process.stdin.on("end", () => {
        ended = true
        settle()
      })
    })
  })

const program = Effect.gen(function*() {
  const [keyFile, principal, policyFile] = process.argv.slice(2)
  const serviceId = keyFromSeed(yield* readSeedFile(keyFile ?? "server.key"))
  if (principal === "--id" || principal === undefined) return yield* Console.log(serviceId)
  const fs = yield* FileSystem.FileSystem
  const ctx = yield* makeApprovals({
    name: "refunds",
    transport: "stdio",
    serviceId,
    principal,
    policy: fs.readFileString(policyFile ?? "policy.txt").pipe(Effect.map((t) => t.trim() || null), Effect.orElseSucceed(() => null))
  })
  const server = new McpServer({ name: "refunds", version: "0.1.0" }, { capabilities: { tools: {} } })
  job(ctx, server, "refund", {
    description: "Refund part of a charge",
    inputSchema: { charge: z.string(), cents: z.number().int().nonnegative() },
    risk: "low",
    plan: async ({ charge, cents }) => [{
      summary: `Refund ${Number(cents) / 100} USD of ${String(charge)}`,
      effects: [{ op: "create", target: "refund", detail: `${Number(cents) / 100} USD to ${String(charge)}` }],
      uses: { spend: { amount: Number(cents), scale: 2, unit: "USD" } },
      undoWindow: 60,
      // The refund itself, which runs only once the plan is allowed: here, a note of it.
      apply: async () => {
        refunded.push(String(charge))
        return { refunded: String(charge), cents: Number(cents) }
      }
    }],
    revert: async () => {
      refunded.pop()
    }
  })
  yield* serveStdio(server)
})

const failed = (code: string, why: string) =>
  Console.error(`error: ${code}: ${why}`).pipe(Effect.andThen(Effect.sync(() => {
    process.exitCode = 1
  })))

program.pipe(
  Effect.scoped,
  Effect.provide(Layer.mergeAll(memoryApprovalStore, randomCodecLayer, NodeContext.layer).pipe(Layer.provideMerge(RandomBytes.live))),
  // A key file that cannot be read, a refused start: one line naming the reason, exit status 1.
  Effect.catchTags({
    ServeError: (e) => failed(e.code, e.message),
    StartupRefused: (e) => failed(`mandate/${e.reason}`, e.message)
  }),
  Effect.runPromise
)
