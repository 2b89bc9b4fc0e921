// Agent Card signatures (A2A 1.0 section 8.4): a JWS (RFC 7515, flattened: `protected`,
// `signature`, optional `header`) whose payload is the card in canonical form, the payload itself
// detached (the card is the payload).
//
// The canonical form (section 8.4.1): the card as an A2A 1.0 `AgentCard` (members outside its
// schema are not part of it: the 0.3 members `url`, `protocolVersion` and `preferredTransport` this
// endpoint also publishes are unsigned), with the `signatures` member excluded and default values
// omitted, in RFC 8785 form. Default values are omitted as the A2A SDKs do (the JS SDK's
// `canonicalizeAgentCard`, the Python SDK's `_clean_empty`): a proto3 field at its default (an
// extension's `required: false`), and, recursively, every empty string, `null`, empty array and
// empty object. For every card this endpoint publishes the two forms are the same bytes (the test
// compares them), so a signature made here verifies with the SDK and one the SDK makes verifies here.
//
// The protected header is `alg` "EdDSA" (Ed25519, the executor's key), `typ` "JOSE" (section
// 8.4.2: SHOULD) and `kid`, the executor's did:key, which is also the key: no key store and no
// `jku` fetch is needed to verify. A client then checks that this key is the one the card's Writ
// extension names (adoption.md 2b), so the signature binds the card's endpoints to the executor.
import { Effect, Either, Option } from "effect"
import { decodeBase64url, encodeBase64url } from "../../kernel/base64url.js"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import { didKeyFromPublicKey, publicKeyFromDidKey } from "../../kernel/didkey.js"
import { verify as ed25519Verify } from "../../kernel/ed25519.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import { Signer } from "../../kernel/services.js"
import { a2aError, type A2aError } from "./errors.js"
import { EXTENSION_URI } from "./schema.js"

/** Section 8.4.2: `typ` SHOULD be "JOSE". */
export const CARD_JWS_TYP = "JOSE"
export const CARD_JWS_ALG = "EdDSA"
/** Signatures one card may carry that a client tries (section 8.4.3 allows several, for key rotation). */
export const MAX_CARD_SIGNATURES = 8

// The members of each A2A 1.0 message the card is made of (the proto's fields, JSON names). A
// member whose value is a free JSON object (`params`, `securitySchemes`, ...) is kept as it is.
type Shape = { readonly [member: string]: Shape | readonly [Shape] | "json" }
const INTERFACE: Shape = { url: "json", protocolBinding: "json", tenant: "json", protocolVersion: "json" }
const EXTENSION: Shape = { uri: "json", description: "json", required: "json", params: "json" }
const SKILL: Shape = {
  id: "json", name: "json", description: "json", tags: "json", examples: "json", inputModes: "json", outputModes: "json",
  securityRequirements: "json"
}
const CARD: Shape = {
  name: "json",
  description: "json",
  supportedInterfaces: [INTERFACE],
  provider: { url: "json", organization: "json" },
  version: "json",
  documentationUrl: "json",
  capabilities: { streaming: "json", pushNotifications: "json", extensions: [EXTENSION], extendedAgentCard: "json" },
  securitySchemes: "json",
  securityRequirements: "json",
  defaultInputModes: "json",
  defaultOutputModes: "json",
  skills: [SKILL],
  iconUrl: "json"
}

const pick = (value: Json, shape: Shape | readonly [Shape] | "json"): Json | undefined => {
  if (shape === "json") return value
  if (Array.isArray(shape)) return Array.isArray(value) ? (value as ReadonlyArray<Json>).map((v) => pick(v, shape[0]) ?? null) : undefined
  if (!isJsonObject(value)) return undefined
  const out: Record<string, Json> = {}
  for (const [k, s] of Object.entries(shape as Shape)) {
    const v = value[k]
    if (v === undefined) continue
    const picked = pick(v, s)
    if (picked !== undefined) out[k] = picked
  }
  return out
}

/** Drops default values, recursively: empty strings, nulls, empty arrays and objects (undefined when all of it is). */
const clean = (v: Json): Json | undefined => {
  if (v === "" || v === null) return undefined
  if (Array.isArray(v)) {
    const items = (v as ReadonlyArray<Json>).map(clean).filter((x): x is Json => x !== undefined)
    return items.length === 0 ? undefined : items
  }
  if (isJsonObject(v)) {
    const out: Record<string, Json> = {}
    for (const [k, x] of Object.entries(v)) {
      const c = clean(x)
      if (c !== undefined) out[k] = c
    }
    return Object.keys(out).length === 0 ? undefined : out
  }
  return v
}

/** The card as section 8.4.1 signs it: its A2A 1.0 members, `signatures` excluded, defaults omitted. */
export const signedCardContent = (card: JsonObject): JsonObject => {
  const picked = pick(card, CARD) as JsonObject
  const extensions = isJsonObject(picked.capabilities) && Array.isArray(picked.capabilities.extensions) ? picked.capabilities.extensions : undefined
  // `AgentExtension.required` is a proto3 bool without presence: false is its default.
  const withDefaults = extensions === undefined ? picked : {
    ...picked,
    capabilities: {
      ...(picked.capabilities as JsonObject),
      extensions: extensions.map((e) => isJsonObject(e) && e.required === false ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== "required")) : e)
    }
  }
  const c = clean(withDefaults)
  return c === undefined || !isJsonObject(c) ? {} : c
}

/** The payload's bytes (RFC 8785: members in UTF-16 order, no whitespace). */
export const canonicalCard = (card: JsonObject): string => encodeCanonical(signedCardContent(card), "utf16")

const signingInput = (protectedB64: string, card: JsonObject) => utf8(`${protectedB64}.${encodeBase64url(utf8(canonicalCard(card)))}`)

/** Signs the card with the Signer's key: the card with its signature appended (section 8.4.2). */
export const signCard = (card: JsonObject): Effect.Effect<JsonObject, never, Signer> =>
  Effect.gen(function*() {
    const signer = yield* Signer
    const header = { alg: CARD_JWS_ALG, kid: didKeyFromPublicKey(signer.publicKey), typ: CARD_JWS_TYP }
    const protectedB64 = encodeBase64url(utf8(encodeCanonical(header, "utf16")))
    const sig = yield* signer.sign(signingInput(protectedB64, card))
    const held = Array.isArray(card.signatures) ? card.signatures : []
    return { ...card, signatures: [...held, { protected: protectedB64, signature: encodeBase64url(sig) }] }
  })

/** What a card's signatures say: none, or one that verifies under the did:key it names. */
export type CardSignatureStatus = { readonly _tag: "unsigned" } | { readonly _tag: "signed"; readonly kid: string }

/** The did the card's Writ extension names (adoption.md 2b), if any. */
const extensionDid = (card: JsonObject): string | undefined => {
  const caps = card.capabilities
  const exts = isJsonObject(caps) && Array.isArray(caps.extensions) ? caps.extensions : []
  const ext = exts.find((e): e is JsonObject => isJsonObject(e) && e.uri === EXTENSION_URI)
  return ext !== undefined && isJsonObject(ext.params) && typeof ext.params.did === "string" ? ext.params.did : undefined
}

/** Why one signature does not count, or its kid. */
const checkOne = (card: JsonObject, entry: Json, did: string | undefined): Either.Either<string, string> => {
  if (!isJsonObject(entry) || typeof entry.protected !== "string" || typeof entry.signature !== "string") return Either.left("not an AgentCardSignature (protected and signature strings)")
  const headerBytes = decodeBase64url(entry.protected)
  const header = Option.isNone(headerBytes) ? undefined : parseJson(new TextDecoder("utf-8", { fatal: true }).decode(headerBytes.value))
  if (header === undefined || Either.isLeft(header) || !isJsonObject(header.right)) return Either.left("protected header is not base64url JSON")
  const h = header.right
  // Section 8.4.2: alg, typ and kid MUST be there.
  if (h.alg !== CARD_JWS_ALG || typeof h.typ !== "string" || typeof h.kid !== "string") return Either.left(`protected header needs alg "${CARD_JWS_ALG}", typ and a did:key kid`)
  if (typeof h.crit !== "undefined") return Either.left("protected header has crit (no extension is understood)")
  const pub = publicKeyFromDidKey(h.kid)
  if (Option.isNone(pub)) return Either.left(`kid ${h.kid} is not an Ed25519 did:key`)
  if (did !== undefined && h.kid !== did) return Either.left(`kid ${h.kid} is not the executor key the card's Writ extension names (${did})`)
  const sig = decodeBase64url(entry.signature)
  if (Option.isNone(sig) || !ed25519Verify(pub.value, signingInput(entry.protected, card), sig.value)) return Either.left(`signature under ${h.kid} does not verify over the canonical card`)
  return Either.right(h.kid)
}

/**
 * Section 8.4.3 on a card as fetched: unsigned (no `signatures`), or signed, when at least one of
 * its signatures verifies under its did:key `kid`, that key being the one the card's Writ extension
 * names when it names one. A card whose signatures all fail is `mandate/a2a_card_signature`: it was
 * changed after it was signed (or signed by another key), and nothing in it is used.
 */
export const verifyCard = (card: JsonObject): Effect.Effect<CardSignatureStatus, A2aError> => {
  const entries = card.signatures
  if (entries === undefined || (Array.isArray(entries) && entries.length === 0)) return Effect.succeed({ _tag: "unsigned" })
  if (!Array.isArray(entries)) return Effect.fail(a2aError("mandate/a2a_card_signature", "card.signatures", "signatures is not an array"))
  const did = extensionDid(card)
  const why: Array<string> = []
  for (const entry of (entries as ReadonlyArray<Json>).slice(0, MAX_CARD_SIGNATURES)) {
    const r = checkOne(card, entry, did)
    if (Either.isRight(r)) return Effect.succeed({ _tag: "signed", kid: r.right })
    why.push(r.left)
  }
  return Effect.fail(a2aError("mandate/a2a_card_signature", "card.signatures", `no signature verifies: ${why.join("; ")}`))
}
