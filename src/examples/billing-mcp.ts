// An example MCP server with job tools (SPEC-mcp-ts "Objective"), for the CLI and the tests: a
// billing desk whose jobs only plan, and whose `apply`/`revert` change an in-process book. The read
// tool `book` shows what ran, so a test can see that a plan ran once, or not at all.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { ApprovalContext } from "../bind/mcp/context.js"
import { guard, job } from "../bind/mcp/job.js"
import { textResult } from "../bind/mcp/render.js"

export interface Book {
  readonly applied: Array<{ readonly tool: string; readonly summary: string }>
  readonly reverted: Array<string>
  readonly archived: Array<string>
}

export const newBook = (): Book => ({ applied: [], reverted: [], archived: [] })

const usd = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")} USD`

/** A fresh server on the one approval context and book (a factory may be called per session). */
export const billingServer = (ctx: ApprovalContext, book: Book): McpServer => {
  const server = new McpServer({ name: ctx.options.name, version: "0.1.0" }, { capabilities: { tools: {} } })
  const applied = (tool: string, summary: string) => async () => {
    book.applied.push({ tool, summary })
    return { done: summary }
  }
  const revert = async (a: { readonly planHash: string }) => {
    book.reverted.push(a.planHash)
  }
  job(ctx, server, "reschedule", {
    description: "Move a calendar event to a new time",
    inputSchema: { event: z.string(), to: z.string() },
    risk: "low",
    plan: async ({ event, to }) => {
      const summary = `Move ${String(event)} to ${String(to)}`
      return [{ summary, effects: [{ op: "update", target: `event/${String(event)}`, field: "start", to }], undoWindow: 3600, apply: applied("reschedule", summary) }]
    },
    revert
  })
  job(ctx, server, "refund", {
    description: "Refund part of a charge",
    inputSchema: { charge: z.string(), cents: z.number().int().nonnegative() },
    risk: "low",
    plan: async ({ charge, cents }) => {
      const c = Number(cents)
      const summary = `Refund ${usd(c)} of ${String(charge)}`
      return [
        {
          summary,
          effects: [{ op: "create", target: "refund", detail: `${usd(c)} to ${String(charge)}` }],
          uses: { spend: { amount: c, scale: 2, unit: "USD" } },
          undoWindow: 60,
          apply: applied("refund", summary)
        }
      ]
    },
    revert
  })
  job(ctx, server, "delete_branch", {
    description: "Delete a git branch",
    inputSchema: { branch: z.string() },
    plan: async ({ branch }) => {
      const b = String(branch)
      const keep = `Delete branch ${b} (restorable at a1b2c3d)`
      const hard = `Delete branch ${b} and its tags`
      return [
        { summary: keep, effects: [{ op: "delete", target: `branch/${b}` }], risk: "medium", undoWindow: 86400, apply: applied("delete_branch", keep) },
        { summary: hard, effects: [{ op: "delete", target: `branch/${b}` }, { op: "delete", target: `tags/${b}/*` }], risk: "medium", apply: applied("delete_branch", hard) }
      ]
    },
    revert,
    // The person types the branch's name (SPEC-mcp-ts `confirmWith`).
    confirmWith: (_plan, input) => String(input.branch)
  })
  job(ctx, server, "send_email", {
    description: "Email the team",
    inputSchema: { to: z.string() },
    risk: "low",
    plan: async ({ to }) => {
      const summary = `Email the notes to ${String(to)}`
      return [{ summary, effects: [{ op: "send", target: String(to) }], uses: { emails: { amount: 1 } }, apply: applied("send_email", summary) }]
    }
  })
  job(ctx, server, "delete_customer", {
    description: "Delete a customer record",
    inputSchema: { customer: z.string() },
    risk: "high",
    plan: async ({ customer }) => {
      const summary = `Delete customer ${String(customer)}`
      return [{ summary, effects: [{ op: "delete", target: `customer/${String(customer)}` }], apply: applied("delete_customer", summary) }]
    }
  })
  // An existing tool, written without YEA, then guarded.
  const archive = server.registerTool("archive", { description: "Archive a document", inputSchema: { doc: z.string() } }, async ({ doc }) => {
    book.archived.push(doc)
    return textResult([`archived ${doc}`])
  })
  guard(ctx, server, archive, {
    describe: ({ doc }) => ({ summary: `Archive ${String(doc)}`, effects: [{ op: "update", target: `doc/${String(doc)}`, field: "archived", to: true }], undoWindow: 600 }),
    risk: "low",
    revert: async ({ input }) => {
      book.reverted.push(`archive:${String((input as { doc?: unknown }).doc)}`)
    }
  })
  server.registerTool("book", { description: "What the jobs have done so far (read only)", annotations: { readOnlyHint: true } }, async () =>
    textResult([JSON.stringify(book)], { ...book })
  )
  return server
}
