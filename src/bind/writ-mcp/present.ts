// What a Writ result looks like on MCP (docs/bindings.md, "What a verified result authenticates"):
// the one function both sides render results with. The server builds its `tools/call` result
// with it; the client rebuilds what it shows from the authenticated parts with it, so for an honest
// server the rebuilt result is exactly the one it sent, and whatever a server writes into
// `content` never reaches the client as verified output.
import { Option, Schema } from "effect"
import { encodeCanonical } from "../../kernel/canonical.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"

/** The extension identifier a server advertises (adoption.md 2a). */
export const EXTENSION = "io.writ/delegation"
/** `params._meta` member of `tools/call` carrying the call (spec section 5). */
export const CALL_META = "io.writ/call"
/** `result._meta` member carrying the tally (spec section 6). */
export const TALLY_META = "io.writ/tally"
/** `result._meta` member of a refusal made before any tally exists (section 7 steps 1 and 2, or
 * the binding's own refusal): the code, unsigned. Nothing a client may count as done. */
export const ERROR_META = "io.writ/error"
/** `result._meta` member saying where the body `out` commits to is: absent, the body is
 * `structuredContent`; `"result"`, it is the result's own `{content, structuredContent?}` (a
 * plain server's result relayed by `writ mcp-gate`, whose content blocks keep their types). A
 * forged value only makes the hash fail (`result_mismatch`): it chooses which bytes are hashed. */
export const BODY_META = "io.writ/body"
/** How a body is carried: as `structuredContent`, or as the result's own members. */
export type BodyForm = "structured" | "result"

/** The largest canonical body also copied into the text block. A larger body is sent once, in
 * `structuredContent`, and the text block says so: two copies of a large body are twice the line,
 * and a stdio peer drops a line over 10 MiB (the SDK's read buffer). */
export const TEXT_COPY_MAX = 64 * 1024

/** The op a tool call is signed as (adoption.md 2a). */
export const toolOp = (tool: string): string => `mcp/tools/${tool}`

/** The fixed text of a pending tally (bindings.md: "a fixed pending notice"). */
export const PENDING_NOTICE = "Writ: this call is pending; its outcome is not known yet (ask sys/tallies later)"

/** The text of a refusal or failure with no body. */
export const refusedText = (code: string): string => `Writ refused this call: ${code}`

/** What the server advertises under `capabilities.extensions` (this SDK has no `server/discover`,
 * so the initialize result carries it): the version and the key its tallies are signed with. */
export const Advertisement = Schema.Struct({ v: Schema.Literal(1), did: Schema.String })
export type Advertisement = typeof Advertisement.Type

const decodeAdvertisement = Schema.decodeUnknownOption(Advertisement)

/** The advertisement in an initialize result's capabilities, if any (other members ignored). */
export const advertisementOf = (capabilities: unknown): Advertisement | undefined => {
  if (!isJsonObject(capabilities) || !isJsonObject(capabilities.extensions)) return undefined
  return Option.getOrUndefined(decodeAdvertisement(capabilities.extensions[EXTENSION]))
}

const codeOf = (tally: JsonObject): string =>
  isJsonObject(tally.err) && typeof tally.err.code === "string" ? tally.err.code : String(tally.st)

/**
 * The `tools/call` result for a tally and its body: `structuredContent` the body (present exactly
 * when `out` is not null), `isError` exactly when `st` is not `ok`, the tally in `_meta`, and one
 * text block: the body's canonical form, or the refusal line, or the pending notice.
 */
export const present = (tally: JsonObject, body: Json | undefined, form: BodyForm = "structured"): JsonObject => {
  const withBody = tally.out !== null && body !== undefined
  if (withBody && form === "result" && isJsonObject(body)) {
    return {
      ...body,
      isError: tally.st !== "ok",
      _meta: { [TALLY_META]: tally, [BODY_META]: "result" }
    }
  }
  const canonical = withBody ? encodeCanonical(body, "utf16") : ""
  const text = withBody
    ? canonical.length <= TEXT_COPY_MAX ? canonical : largeBodyText(canonical.length)
    : tally.st === "pending"
    ? PENDING_NOTICE
    : refusedText(codeOf(tally))
  return {
    content: [{ type: "text", text }],
    ...(withBody ? { structuredContent: body } : {}),
    isError: tally.st !== "ok",
    _meta: { [TALLY_META]: tally }
  }
}

/** The text block of a body too large to copy (its size in UTF-16 units of the canonical form). */
export const largeBodyText = (size: number): string => `Writ: the result (${size} characters) is in structuredContent`

/** The body of a relayed result (form "result"): its `content` and `structuredContent`, nothing else. */
export const resultBody = (result: JsonObject): JsonObject => ({
  content: Array.isArray(result.content) ? result.content : [],
  ...(isJsonObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {})
})

/** A refusal with no tally (the server's unsigned errors, the binding's `missing_call` and
 * `malformed`): an error result naming the code, nothing a client can take for a receipt. */
export const presentRefusal = (code: string): JsonObject => ({
  content: [{ type: "text", text: refusedText(code) }],
  isError: true,
  _meta: { [ERROR_META]: code }
})
