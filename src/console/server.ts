// The console's HTTP server: an @effect/platform HttpRouter over the read-only sources of
// stores.ts. Every answer is JSON encoded by its Schema (api.ts), every query and body decoded by
// one; refusals are `{"error": reason, "detail": why}` with the reason codes of reason.ts.
//
//   GET  /                    the page;  GET /assets/app.js, /assets/app.css  its bundle
//   GET  /api/info            what the console was given
//   GET  /api/audit?...       one keyset page of the audit record (section 9.3)
//   GET  /api/audit/count?... how many entries match the same filters
//   GET  /api/calls?after=    the calls in the executor's store, a page at a time
//   GET  /api/calls/tree?leaf=&id=   the tally tree of one stored call
//   POST /api/tally           the tally tree of a tally/answer file the page read (with its call)
//   GET  /api/store-limits?after=   the executor's count and total stores: limit, used, remaining
//   GET  /api/ledger          budgets, decisions, stats, replay diff and the hash-chain verdict
//   GET  /api/ledger/lines?after=&limit=   the ledger's lines, a keyset page at a time
//   GET  /api/spend?bucket=   spend per principal, protocol and budget over time (spend.ts)
//
// DNS rebinding: a page on another origin could point a name at 127.0.0.1 and read the console,
// so a request whose Host header is not a loopback name (or one allowed with --allow-host) is
// refused with `console/host_refused` before anything else. Cross-origin requests: a page on any
// origin can send a request to 127.0.0.1 (a no-cors fetch, an <img>) and make the console scan a
// ledger, even if it cannot read the answer; a browser names the requesting page in `Origin` and
// `Sec-Fetch-Site` (Fetch Metadata), so an API request whose Origin is not the console's own, or
// whose Sec-Fetch-Site is neither `same-origin` nor `none`, is refused with
// `console/origin_refused` before any store is read. A client that sends neither (curl, a
// program) is not a page and is answered.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { type Json, parseJson } from "../kernel/json.js"
import {
  AuditCount, AuditPage, CallList, ConsoleInfo, ErrorBody, LedgerLines, LedgerLinesQuery, LedgerView, SpendQuery, SpendView, StoreLimits,
  TreeRequest, TreeView
} from "./api.js"
import { ConsoleAssets } from "./assets.js"
import { readBoundedText } from "./body.js"
import { decodeAuditQuery } from "./audit.js"
import { readLedger } from "../ledger/index.js"
import { ledgerView, linesPage } from "./ledger-view.js"
import { ledgerSpend, type SpendEntry, spendView } from "./spend.js"
import { consoleError, type ConsoleError, parseDetail, statusOf } from "./reason.js"
import { ConsoleAudit, ConsoleConfig, type ConsoleConfigShape, ConsoleLedger } from "./stores.js"
import { treeView } from "./tally-view.js"

export const MAX_TREE_BODY = 1_600_000
export const LOOPBACK_NAMES: ReadonlyArray<string> = ["127.0.0.1", "localhost", "::1"]

const headers = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const json = <A, I>(schema: Schema.Schema<A, I>, value: A, status = 200) =>
  Effect.map(Schema.encode(schema)(value).pipe(Effect.orDie), (body) => HttpServerResponse.unsafeJson(body, { status, headers }))

const refusal = (e: ConsoleError) =>
  Effect.map(json(ErrorBody, { error: e.reason, detail: `${e.where ? `${e.where}: ` : ""}${e.detail}` }, statusOf[e.reason]),
    // The rest of a body over the limit is not read: the connection ends with the answer.
    (r) => (e.reason === "console/too_large" ? HttpServerResponse.setHeader(r, "connection", "close") : r))

/** The host name of a Host header value (`[::1]:8080` is `::1`, `localhost:80` is `localhost`). */
export const hostName = (host: string): string => {
  const h = host.trim().toLowerCase()
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined)
  const colon = h.lastIndexOf(":")
  return colon >= 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h
}

/** The query string as single values (a repeated member is refused, not guessed at). */
const singleParams = Effect.flatMap(HttpServerRequest.ParsedSearchParams, (p) => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(p)) {
    if (typeof v !== "string") return Effect.fail(consoleError("console/bad_request", "a query member is repeated", k))
    out[k] = v
  }
  return Effect.succeed(out)
})

const parse = (text: string, where: string): Effect.Effect<Json, ConsoleError> => {
  const r = parseJson(text, { maxDepth: 64, integersOnly: false })
  return r._tag === "Right" ? Effect.succeed(r.right) : Effect.fail(consoleError("console/wrong_type", `not JSON: ${r.left.message}`, where))
}

const decodeQuery = <A, I>(schema: Schema.Schema<A, I>) => (params: Record<string, string>): Effect.Effect<A, ConsoleError> =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error" })(Object.fromEntries(Object.entries(params).filter(([, v]) => v !== ""))).pipe(
    Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/bad_request", parseDetail(e), "query"))))

const needLedger = Effect.flatMap(ConsoleLedger, Option.match({
  onNone: () => Effect.fail(consoleError("console/not_configured", "no ledger given (--ledger FILE)", "ledger")),
  onSome: Effect.succeed
}))

const namesOf = (c: ConsoleConfigShape) => new Map((c.names ?? []).map((n) => [n.id, n.name] as const))

const needAudit = Effect.flatMap(ConsoleAudit, Option.match({
  onNone: () => Effect.fail(consoleError("console/not_configured", "no executor store given (--store FILE)", "store")),
  onSome: Effect.succeed
}))

const routes = HttpRouter.empty.pipe(
  HttpRouter.get("/", Effect.map(ConsoleAssets, (a) => HttpServerResponse.text(a.html, { contentType: "text/html; charset=utf-8", headers }))),
  HttpRouter.get("/assets/app.js", Effect.map(ConsoleAssets, (a) => HttpServerResponse.text(a.js, { contentType: "text/javascript; charset=utf-8", headers }))),
  HttpRouter.get("/assets/app.css", Effect.map(ConsoleAssets, (a) => HttpServerResponse.text(a.css, { contentType: "text/css; charset=utf-8", headers }))),
  HttpRouter.get("/api/info", Effect.gen(function*() {
    const c = yield* ConsoleConfig
    return yield* json(ConsoleInfo, {
      store: Option.getOrNull(c.store),
      ledger: Option.getOrNull(Option.map(c.ledger, (l) => `${l.file} (${l.name})`)),
      policy: Option.getOrNull(Option.map(c.policy, (p) => p.file)),
      names: (c.names ?? []).map((n) => ({ id: n.id, label: n.name, named: true }))
    })
  })),
  HttpRouter.get("/api/audit", Effect.gen(function*() {
    const store = yield* needAudit
    const q = yield* Effect.flatMap(singleParams, decodeAuditQuery)
    return yield* json(AuditPage, yield* store.auditPage(q))
  })),
  HttpRouter.get("/api/audit/count", Effect.gen(function*() {
    const store = yield* needAudit
    const q = yield* Effect.flatMap(singleParams, decodeAuditQuery)
    return yield* json(AuditCount, { count: yield* store.auditCount(q) })
  })),
  HttpRouter.get("/api/calls", Effect.gen(function*() {
    const store = yield* needAudit
    const p = yield* singleParams
    return yield* json(CallList, yield* store.calls(p.after, 50))
  })),
  HttpRouter.get("/api/store-limits", Effect.gen(function*() {
    const store = yield* needAudit
    const p = yield* singleParams
    return yield* json(StoreLimits, yield* store.limits(p.after, 100))
  })),
  HttpRouter.get("/api/calls/tree", Effect.gen(function*() {
    const store = yield* needAudit
    const p = yield* singleParams
    if (!p.leaf || !p.id) return yield* Effect.fail(consoleError("console/bad_request", "leaf and id are required", "query"))
    const a = yield* store.answer(p.leaf, p.id)
    const tally = yield* parse(a.tally, "writ_calls.tally")
    // The call store keeps the call's identity, not the call: without it section 6.2 cannot run
    // at the top, so the tree is drawn unchecked there (its sub-hops are checked under their writs).
    return yield* json(TreeView, yield* treeView(`store call ${p.leaf}/${p.id}`, tally, undefined))
  })),
  HttpRouter.post("/api/tally", Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    // A declared length over the limit is refused unread; any body is counted as it arrives.
    const declared = Number(req.headers["content-length"] ?? "0")
    if (declared > MAX_TREE_BODY) return yield* Effect.fail(consoleError("console/too_large", `a body of at most ${MAX_TREE_BODY} bytes`, "body"))
    const text = yield* readBoundedText(MAX_TREE_BODY)
    const body = yield* Effect.flatMap(parse(text, "body"), (v) => Schema.decodeUnknown(TreeRequest, { onExcessProperty: "error" })(v)).pipe(
      Effect.catchTag("ParseError", (e) => Effect.fail(consoleError("console/bad_request", parseDetail(e), "body"))))
    const tally = yield* parse(body.tally, body.name)
    const call = body.call === undefined ? undefined : yield* parse(body.call, "call")
    return yield* json(TreeView, yield* treeView(body.name, tally, call))
  })),
  HttpRouter.get("/api/ledger", Effect.gen(function*() {
    return yield* json(LedgerView, yield* ledgerView(yield* needLedger))
  })),
  HttpRouter.get("/api/ledger/lines", Effect.gen(function*() {
    const ledger = yield* needLedger
    const q = yield* Effect.flatMap(singleParams, decodeQuery(LedgerLinesQuery))
    return yield* json(LedgerLines, yield* linesPage(ledger, q.after ?? -1, q.limit ?? 100))
  })),
  HttpRouter.get("/api/spend", Effect.gen(function*() {
    const q = yield* Effect.flatMap(singleParams, decodeQuery(SpendQuery))
    const audit = yield* ConsoleAudit
    const ledger = yield* ConsoleLedger
    if (Option.isNone(audit) && Option.isNone(ledger)) {
      return yield* Effect.fail(consoleError("console/not_configured", "no executor store nor ledger given (--store FILE, --ledger FILE)", "spend"))
    }
    const entries: Array<SpendEntry> = []
    const notes: Array<string> = []
    if (Option.isSome(ledger)) {
      // A broken chain stops the strict reader: its spend is not shown, and the note says why.
      const fromLedger = yield* ledgerSpend(readLedger(ledger.value.store.lines)).pipe(
        Effect.catchTag("LedgerError", (e) => Effect.as(Effect.sync(() => notes.push(`the ledger's spend is not shown: ${e.reason} (${e.detail})`)), [])),
        Effect.mapError((e) => consoleError("console/store_unavailable", `${e._tag}: ${e.message.slice(0, 300)}`, ledger.value.name))
      )
      entries.push(...fromLedger)
    }
    if (Option.isSome(audit)) entries.push(...yield* audit.value.callSpend)
    return yield* json(SpendView, spendView(entries, q.bucket ?? "hour", namesOf(yield* ConsoleConfig), notes))
  })),
  Effect.catchTag("RouteNotFound", () => refusal(consoleError("console/not_found", "no such page", "path")))
)

/** Refuses an API request a page of another origin made (Fetch Metadata and Origin). */
export const sameOrigin = (headers: Readonly<Record<string, string | undefined>>, host: string): Effect.Effect<void, ConsoleError> => {
  const origin = headers["origin"]
  const site = headers["sec-fetch-site"]
  if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return Effect.fail(consoleError("console/origin_refused", `a page of ${JSON.stringify(origin.slice(0, 100))} may not use the console's API`, "origin"))
  }
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return Effect.fail(consoleError("console/origin_refused", `a ${JSON.stringify(site.slice(0, 32))} request may not use the console's API`, "sec-fetch-site"))
  }
  return Effect.void
}

export interface ConsoleHttpOptions {
  /** Host names accepted besides loopback's (`--allow-host`). */
  readonly allowHosts?: ReadonlyArray<string>
}

/** The console as an HttpApp over its sources and assets. */
export const consoleApp = (options: ConsoleHttpOptions = {}): HttpApp.Default<never, ConsoleAssets | ConsoleAudit | ConsoleLedger | ConsoleConfig> => {
  const allowed = new Set([...LOOPBACK_NAMES, ...(options.allowHosts ?? []).map((h) => hostName(h))])
  const app = HttpRouter.withRouterConfig(routes, { caseSensitive: true, ignoreTrailingSlash: false })
  return Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    const host = req.headers["host"] ?? ""
    if (!allowed.has(hostName(host))) return yield* Effect.fail(consoleError("console/host_refused", `Host ${JSON.stringify(host.slice(0, 100))} is not loopback (start with --allow-host NAME to serve it)`, "host"))
    if (req.url.startsWith("/api/")) yield* sameOrigin(req.headers, host)
    return yield* app
  }).pipe(
    Effect.catchTag("ConsoleError", refusal),
    Effect.withSpan("console.request")
  )
}
