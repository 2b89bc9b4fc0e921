// The OpenAPI adapter (docs/openapi.md): a REST API as a YEA service. GET operations become `ask`
// capabilities (the response as the ANSWER); POST, PUT, PATCH and DELETE become `intent`
// capabilities whose one proposal shows the exact request it would send (method, URL, body) and
// sends nothing until COMMIT. Wrapped writes are irreversible (`undo: never`), so they are never
// auto-committed, and grants, limits and consent apply unchanged. Upstream errors are YEA errors.
// On COMMIT, a 5xx or an unanswered request (`unavailable`) may have acted upstream: the runtime
// records it as an unknown outcome and never sends the write again (service/commit.ts).
//
// A preset (preset.ts) narrows a document to an allow-list of operations, each with its risk and
// the projection of its answer (projection.ts); the adapter takes that as `operations`.
//
// The upstream HTTP call is a service (`Upstream`), so this module is pure translation; the
// fetch-based Layer is in src/bind/yea-openapi/upstream.ts.
import { Context, Effect, Predicate } from "effect"
import type { RiskLevel } from "../caveat.js"
import { yeaError, type YeaError } from "../reason.js"
import { ask, intent, plans, type CapabilitySpec, type ServiceSpec } from "../service/define.js"
import { project, type Projection } from "./projection.js"

export interface UpstreamRequest {
  readonly method: string
  readonly url: string
  readonly body?: unknown
}
export interface UpstreamResponse {
  readonly status: number
  readonly body: unknown
}

/** The upstream API, as the adapter reaches it (headers such as credentials live in the Layer, never in a proposal). */
export class Upstream extends Context.Tag("mandate/yea/openapi/Upstream")<Upstream, { readonly send: (r: UpstreamRequest) => Effect.Effect<UpstreamResponse, YeaError> }>() {}

export interface OpenApiOptions {
  /** The API's base URL; defaults to the spec's first server. */
  readonly base?: string
  /** The service id (proofs are bound to it); defaults to the base URL's host. */
  readonly id?: string
  /** The capability prefix; defaults to a slug of the API's title. */
  readonly prefix?: string
  readonly trust: ReadonlyArray<string>
  /** Risk of a write; default: delete `medium`, others `low`. */
  readonly risk?: (method: string, path: string) => RiskLevel
  /**
   * An allow-list by operationId: when given, only these operations are served, a write with the
   * risk named here (else `risk`'s), and an answer (or a commit's result) cut down to its projection.
   */
  readonly operations?: Readonly<Record<string, OperationRule>>
}

/** What a preset says about one operation it allows. */
export interface OperationRule {
  /** The write's risk; a read (GET) is an `ask` and has none. */
  readonly risk?: RiskLevel
  readonly projection?: Projection
}

const WRITES: Readonly<Record<string, "create" | "update" | "delete">> = { post: "create", put: "update", patch: "update", delete: "delete" }
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "") || "api"

/** The compact type (SPEC §4.1.1) of a JSON Schema, as far as it maps; anything else is `any`. */
const compactType = (schema: unknown): unknown => {
  if (!Predicate.isRecord(schema)) return "any"
  const desc = typeof schema.description === "string" ? ` — ${schema.description.replace(/\s+/g, " ").slice(0, 200)}` : ""
  if (Array.isArray(schema.enum) && schema.enum.every((x) => typeof x === "string")) return `${(schema.enum as Array<string>).join("|")}${desc}`
  switch (schema.type) {
    case "integer": return `int${desc}`
    case "number": return `number${desc}`
    case "boolean": return `bool${desc}`
    case "string": return `${schema.format === "date" ? "date" : schema.format === "date-time" ? "datetime" : "string"}${desc}`
    // §4.1.1: an array of a base type is `base[]` (before any description); of objects, `[{...}]`.
    case "array": {
      const item = compactType(schema.items)
      if (typeof item !== "string") return Array.isArray(item) ? `any[]${desc}` : [item]
      const cut = item.indexOf(" — ")
      return cut < 0 ? `${item}[]${desc}` : `${item.slice(0, cut)}[]${item.slice(cut)}`
    }
    case "object": {
      const props = Predicate.isRecord(schema.properties) ? schema.properties : {}
      const req = Array.isArray(schema.required) ? schema.required : []
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [req.includes(k) ? k : `${k}?`, compactType(v)]))
    }
    default: return `any${desc}`
  }
}

interface Operation {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly name: string
  readonly summary?: string
  readonly pathParams: ReadonlyArray<string>
  /** Path parameters marked `x-multi-segment` (a file path such as `src/a.ts`): their `/` are kept. */
  readonly multiSegment: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly params: Record<string, unknown>
  readonly hasBody: boolean
}

/** The operations of a spec (OpenAPI 3: `paths` → methods), named `prefix.operationId`. */
export const operations = (spec: unknown, prefix: string): ReadonlyArray<Operation> => {
  const paths = Predicate.isRecord(spec) && Predicate.isRecord(spec.paths) ? spec.paths : {}
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(paths)) {
    if (!Predicate.isRecord(item)) continue
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      const op = item[method]
      if (!Predicate.isRecord(op)) continue
      const params: Record<string, unknown> = {}
      const pathParams: Array<string> = []
      const multiSegment: Array<string> = []
      const queryParams: Array<string> = []
      const declared = [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])]
      for (const p of declared) {
        if (!Predicate.isRecord(p) || typeof p.name !== "string" || (p.in !== "path" && p.in !== "query")) continue
        ;(p.in === "path" ? pathParams : queryParams).push(p.name)
        if (p.in === "path" && p["x-multi-segment"] === true) multiSegment.push(p.name)
        params[p.in === "path" || p.required === true ? p.name : `${p.name}?`] = compactType(p.schema)
      }
      const content = Predicate.isRecord(op.requestBody) && Predicate.isRecord(op.requestBody.content) ? op.requestBody.content["application/json"] : undefined
      const hasBody = Predicate.isRecord(content)
      if (hasBody) params[Predicate.isRecord(op.requestBody) && op.requestBody.required === true ? "body" : "body?"] = compactType(content.schema)
      const id = typeof op.operationId === "string" ? op.operationId : `${method}_${path}`
      out.push({ operationId: id, method, path, name: `${prefix}.${slug(id)}`, ...(typeof op.summary === "string" ? { summary: op.summary } : {}), pathParams, multiSegment, queryParams, params, hasBody })
    }
  }
  return out
}

/** The request an operation sends for `params`; a path param that is missing is `invalid_params`. */
export const requestFor = (base: string, op: Operation, params: Readonly<Record<string, unknown>>): Effect.Effect<UpstreamRequest, YeaError> =>
  Effect.gen(function* () {
    let path = op.path
    for (const p of op.pathParams) {
      const v = params[p]
      if (v === undefined || v === null) return yield* Effect.fail(yeaError("invalid_params", `${p} is required`))
      // A multi-segment value keeps its `/` but each segment is encoded, and `.`, `..` and empty
      // segments are refused: the URL parser would resolve them and reach another endpoint.
      const segments = op.multiSegment.includes(p) ? String(v).split("/") : [String(v)]
      if (segments.length > 1 && segments.some((s) => s === "" || s === "." || s === "..")) return yield* Effect.fail(yeaError("invalid_params", `${p} has an empty, "." or ".." segment`))
      path = path.replace(`{${p}}`, segments.map(encodeURIComponent).join("/"))
    }
    const url = new URL(base.replace(/\/+$/, "") + path)
    for (const q of op.queryParams) if (params[q] !== undefined) url.searchParams.set(q, String(params[q]))
    return { method: op.method.toUpperCase(), url: url.toString(), ...(op.hasBody && params.body !== undefined ? { body: params.body } : {}) }
  })

const upstreamError = (r: UpstreamResponse) =>
  yeaError(r.status === 404 ? "not_found" : r.status === 409 ? "conflict" : r.status >= 500 ? "unavailable" : "invalid_params", `upstream answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`)

const send = (req: UpstreamRequest, projection?: Projection) =>
  Effect.flatMap(Upstream, (u) =>
    Effect.flatMap(u.send(req), (r) => (r.status >= 200 && r.status < 300 ? Effect.succeed(projection === undefined ? r.body : project(r.body, projection)) : Effect.fail(upstreamError(r))))
  )

/** The YEA service of an OpenAPI document. */
export const fromOpenAPI = (spec: unknown, options: OpenApiOptions): ServiceSpec<Upstream> => {
  const info = Predicate.isRecord(spec) && Predicate.isRecord(spec.info) ? spec.info : {}
  const servers = Predicate.isRecord(spec) && Array.isArray(spec.servers) ? spec.servers : []
  const base = options.base ?? (Predicate.isRecord(servers[0]) && typeof servers[0].url === "string" ? servers[0].url : "http://127.0.0.1")
  const title = typeof info.title === "string" ? info.title : "api"
  const prefix = options.prefix ?? slug(title)
  const risk = options.risk ?? ((m: string) => (m === "delete" ? "medium" : "low"))
  const caps: Record<string, CapabilitySpec<Upstream>> = {}
  for (const op of operations(spec, prefix)) {
    const rule = options.operations === undefined ? {} : options.operations[op.operationId]
    if (rule === undefined) continue
    const summary = op.summary ?? `${op.method.toUpperCase()} ${op.path}`
    if (op.method === "get") {
      caps[op.name] = ask({ summary, params: op.params as never, run: ({ params }) => Effect.flatMap(requestFor(base, op, params), (req) => send(req, rule.projection)) })
      continue
    }
    const write = WRITES[op.method]
    caps[op.name] = intent({
      summary,
      params: op.params as never,
      risk: rule.risk ?? risk(op.method, op.path),
      plan: ({ params }) =>
        Effect.map(requestFor(base, op, params), (req) => {
          const u = new URL(req.url)
          return plans({
            summary: `${req.method} ${u.pathname}${u.search}`,
            effects: [{ op: write, target: `${u.host}${u.pathname}`, ...(req.body === undefined ? {} : { detail: `body ${JSON.stringify(req.body)}` }) }],
            // No undoWindow: a wrapped write can't be undone, so it is never auto-committed.
            action: req
          })
        }),
      commit: (action) => send(action as UpstreamRequest, rule.projection)
    })
  }
  return { id: options.id ?? new URL(base).host, name: title, ...(typeof info.description === "string" ? { summary: info.description } : {}), trust: options.trust, capabilities: caps }
}
