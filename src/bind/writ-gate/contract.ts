// The request contract of docs/writ-gate.md: each route is a contract for the request it
// matches, enforced before the executor runs, so the API never sees a request that breaks it.
// And the request the API receives instead, rebuilt from the signed arguments alone.
import { Effect, Either } from "effect"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject, parseJson, scanDepth } from "../../kernel/json.js"
import { gateError, type GateError } from "./errors.js"
import { type CheckedMapping, type CheckedRoute, fold } from "./mapping.js"

/** Largest request body the gate reads: a call's arguments are at most 65536 canonical bytes. */
export const MAX_BODY_BYTES = 65536

/** The route a method and path select, with its path parameters as sent (percent-decoded). A
 * `{name}` segment matches any one segment. None: 404, and the API is never reached. */
export const matchRoute = (
  mapping: CheckedMapping,
  method: string,
  pathname: string
): { readonly route: CheckedRoute; readonly params: Readonly<Record<string, string>> } | undefined => {
  const parts = pathname.split("/").slice(1)
  for (const route of mapping.routes) {
    if (route.route.method.toUpperCase() !== method.toUpperCase() || route.segments.length !== parts.length) continue
    const params: Record<string, string> = {}
    let ok = true
    for (let i = 0; i < parts.length && ok; i++) {
      const s = route.segments[i]
      if ("literal" in s) ok = s.literal === parts[i]
      else {
        let v: string
        try {
          v = decodeURIComponent(parts[i])
        } catch {
          v = parts[i]
        }
        params[s.param] = v
        ok = parts[i] !== ""
      }
    }
    if (ok) return { route, params }
  }
  return undefined
}

const fail = (reason: GateError["reason"], path: string, message: string) => Effect.fail(gateError(reason, path, message))

/** No two member names of any object of the body fold together, at any depth. */
const checkFolding = (v: Json, path: string): Effect.Effect<void, GateError> =>
  Effect.gen(function*() {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) yield* checkFolding(v[i], `${path}[${i}]`)
      return
    }
    if (!isJsonObject(v)) return
    const seen = new Map<string, string>()
    for (const k of Object.keys(v)) {
      const f = fold(k)
      const other = seen.get(f)
      if (other !== undefined) return yield* fail("gate/ambiguous_member", `${path}.${k}`, `${JSON.stringify(k)} and ${JSON.stringify(other)} fold together`)
      seen.set(f, k)
      yield* checkFolding(v[k], `${path}.${k}`)
    }
  })

/** The tree of bound members: a leaf is the argument it signs, an inner node an object. */
type Tree = { readonly [name: string]: Tree | { readonly arg: string } }
const isLeaf = (t: Tree | { readonly arg: string }): t is { readonly arg: string } => typeof (t as { arg?: unknown }).arg === "string"

const treeOf = (route: CheckedRoute): Tree => {
  const root: Record<string, unknown> = {}
  for (const [arg, names] of route.body) {
    let node = root
    names.forEach((n, i) => {
      if (i === names.length - 1) node[n] = { arg }
      else node = (node[n] ??= {}) as Record<string, unknown>
    })
  }
  return root as Tree
}

/** The body holds exactly the bound members (`gate/unbound_member` at any depth; a bound member
 * missing, or a non-object where an object was expected, `malformed`); returns the arguments. */
const extract = (v: JsonObject, tree: Tree, path: string, out: Record<string, Json>): Effect.Effect<void, GateError> =>
  Effect.gen(function*() {
    for (const k of Object.keys(v)) {
      if (!Object.prototype.hasOwnProperty.call(tree, k)) return yield* fail("gate/unbound_member", `${path}.${k}`, "no bind entry names this member")
    }
    for (const [k, node] of Object.entries(tree)) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) return yield* fail("malformed", `${path}.${k}`, "a bound member is missing")
      if (isLeaf(node)) {
        out[node.arg] = v[k]
        continue
      }
      const inner = v[k]
      if (!isJsonObject(inner)) return yield* fail("malformed", `${path}.${k}`, "an object was expected")
      yield* extract(inner, node, `${path}.${k}`, out)
    }
  })

/**
 * The request contract, in the document's order: no query string; the body one strict JSON object
 * (an empty body when the route binds no body member); no member names that fold together; exactly
 * the bound members; no `.` or `..` path parameter. Returns the arguments the request carries.
 */
export const checkRequest = (
  route: CheckedRoute,
  params: Readonly<Record<string, string>>,
  query: string,
  body: Uint8Array
): Effect.Effect<JsonObject, GateError> =>
  Effect.gen(function*() {
    if (query !== "") return yield* fail("gate/unbound_query", "query", "routes bind nothing from the query")
    const out: Record<string, Json> = {}
    for (const [arg, p] of route.params) {
      const v = params[p]
      if (v === "." || v === "..") return yield* fail("malformed", `path.${p}`, "a dot segment")
      out[arg] = v
    }
    if (route.body.length === 0) {
      if (body.length > 0 && Buffer.from(body).toString("utf8").trim() !== "") {
        return yield* fail("gate/unbound_member", "body", "this route binds no body member and takes an empty body")
      }
      return out
    }
    if (body.length > MAX_BODY_BYTES) return yield* fail("too_large", "body", `over ${MAX_BODY_BYTES} bytes`)
    if (scanDepth(Buffer.from(body).toString("latin1")) > 64) return yield* fail("too_large", "body", "nested deeper than 64")
    // Strict reading: no repeated member, no lone surrogate, valid UTF-8, nothing after the value,
    // integers only (a signed argument is an integer: section 1.1 rule 2).
    const parsed = parseJson(body, { maxDepth: 64, integersOnly: true })
    if (Either.isLeft(parsed)) return yield* fail(parsed.left.reason, "body", parsed.left.message)
    const v = parsed.right
    if (!isJsonObject(v)) return yield* fail("malformed", "body", "the body is a JSON object")
    yield* checkFolding(v, "$")
    yield* extract(v, treeOf(route), "$", out)
    return out
  })

/** What the API receives: the route's method, its path filled from the signed values
 * (percent-encoded), and a body holding each bound member once, in canonical form. */
export interface Rebuilt {
  readonly method: string
  readonly path: string
  readonly body: Uint8Array | undefined
}

export const fillPath = (path: string, values: Readonly<Record<string, Json>>): string =>
  path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, p: string) => encodeURIComponent(String(values[p])))

export const rebuild = (route: CheckedRoute, args: JsonObject): Rebuilt => {
  const byParam: Record<string, Json> = {}
  for (const [arg, p] of route.params) byParam[p] = args[arg]
  let body: Uint8Array | undefined
  if (route.body.length > 0) {
    const root: Record<string, Json> = {}
    for (const [arg, names] of route.body) {
      let node = root
      names.forEach((n, i) => {
        if (i === names.length - 1) node[n] = args[arg]
        else node = (node[n] ??= {}) as Record<string, Json>
      })
    }
    body = utf8(encodeCanonical(root, "utf16"))
  }
  return { method: route.route.method.toUpperCase(), path: fillPath(route.route.path, byParam), body }
}

/** Request headers never forwarded (docs/writ-gate.md), with the hop-by-hop ones (RFC 9110 7.6.1). */
export const DROPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  "writ-call", "host", "content-type", "content-length", "content-encoding", "transfer-encoding",
  "x-http-method-override", "x-http-method", "x-method-override",
  "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "expect"
])

/** Response headers the gate sets itself or that belong to one hop. */
export const DROPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  "content-length", "transfer-encoding", "connection", "keep-alive", "writ-tally", "trailer", "upgrade"
])
