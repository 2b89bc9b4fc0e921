// A fake upstream REST API for the preset tests, on 127.0.0.1 only: answers from a route table
// (method and path pattern → status and JSON body) and records every request with the headers a
// credential would come in, so a test can see what was sent upstream, and that a proposal sent
// nothing.
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export interface Seen {
  readonly method: string
  /** Path and query, as received. */
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

export type Route = (method: string, path: string, query: URLSearchParams, body: unknown) => { readonly status: number; readonly body?: unknown } | undefined

export const startFake = async (route: Route) => {
  const seen: Array<Seen> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const text = Buffer.concat(chunks).toString("utf8")
      const body = text === "" ? undefined : (JSON.parse(text) as unknown)
      seen.push({ method: req.method ?? "", url: `${url.pathname}${url.search}`, headers: req.headers, body })
      const r = route(req.method ?? "", url.pathname, url.searchParams, body) ?? { status: 404, body: { message: "Not Found" } }
      res.writeHead(r.status, { "content-type": "application/json" })
      res.end(r.body === undefined ? "" : JSON.stringify(r.body))
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, seen, close: () => new Promise<void>((r) => server.close(() => r())) }
}

/** A GitHub-shaped issue, with the many fields a projection drops. */
export const ghIssue = (number: number, title: string, login: string, labels: ReadonlyArray<string>) => ({
  url: `https://api.github.test/repos/octo/demo/issues/${number}`,
  html_url: `https://github.test/octo/demo/issues/${number}`,
  id: 1000 + number,
  node_id: "I_kwDO" + number,
  number,
  title,
  state: "open",
  user: { login, id: 7, avatar_url: "https://avatars.test/u/7", type: "User" },
  labels: labels.map((name, i) => ({ id: i, name, color: "ededed" })),
  comments: 2,
  created_at: "2026-11-01T10:00:00Z",
  updated_at: "2026-11-02T10:00:00Z",
  body: `body of ${number}`,
  reactions: { total_count: 0 }
})

/** The fake GitHub: a repo's issues, search, a PR and its merge. */
export const githubRoutes: Route = (method, path, query) => {
  if (method === "GET" && path === "/repos/octo/demo/issues") {
    const all = [ghIssue(3, "Terminal wraps badly", "ana", ["bug"]), ghIssue(2, "Add a toggle", "bo", []), ghIssue(1, "Docs typo", "cy", ["docs", "good first issue"])]
    return { status: 200, body: all.slice(0, Number(query.get("per_page") ?? 30)) }
  }
  if (method === "GET" && path === "/repos/octo/demo/issues/3") return { status: 200, body: ghIssue(3, "Terminal wraps badly", "ana", ["bug"]) }
  if (method === "GET" && path === "/repos/octo/demo/contents/src/a%20b.ts") return { status: 200, body: { type: "file", name: "a b.ts", path: "src/a b.ts", size: 4, sha: "abc", encoding: "base64", content: "eCA9IDEK", url: "https://api.github.test/x", _links: {} } }
  if (method === "GET" && path === "/search/issues") return { status: 200, body: { total_count: 1, incomplete_results: false, items: [{ ...ghIssue(2, "Add a toggle", "bo", []), repository_url: "https://api.github.test/repos/octo/demo" }] } }
  if (method === "PUT" && path === "/repos/octo/demo/pulls/42/merge") return { status: 200, body: { sha: "6dcb09b", merged: true, message: "Pull Request successfully merged" } }
  if (method === "POST" && path === "/repos/octo/demo/issues/3/comments") return { status: 201, body: { id: 99, html_url: "https://github.test/octo/demo/issues/3#issuecomment-99", body: "thanks", user: { login: "me" } } }
  return undefined
}

/** The fake Petstore: pets by status, a user (with a password the projection drops), deletes. */
export const petstoreRoutes: Route = (method, path, query) => {
  const rex = { id: 10, name: "Rex", category: { id: 1, name: "Dogs" }, photoUrls: ["https://photos.test/rex.jpg"], tags: [{ id: 1, name: "friendly" }], status: "available" }
  if (method === "GET" && path === "/api/v3/pet/findByStatus") return { status: 200, body: query.get("status") === "available" ? [rex] : [] }
  if (method === "GET" && path === "/api/v3/pet/10") return { status: 200, body: rex }
  if (method === "DELETE" && path === "/api/v3/pet/10") return { status: 200, body: "Pet deleted" }
  if (method === "GET" && path === "/api/v3/user/ana") return { status: 200, body: { id: 1, username: "ana", firstName: "Ana", lastName: "Lima", email: "ana@example.test", password: "hunter2", phone: "555-0100", userStatus: 1 } }
  if (method === "POST" && path === "/api/v3/user") return { status: 200, body: { username: "bo", password: "x" } }
  return undefined
}
