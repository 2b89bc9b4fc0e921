/** SHA-256 and the base64url hash form used for object identities (Writ v0.1 section 1.5). */
import * as crypto from "node:crypto"
import { encodeBase64url } from "./base64url.js"

export const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(crypto.createHash("sha256").update(bytes).digest())

/** base64url (no padding) of SHA-256: 43 characters. */
export const hashB64 = (bytes: Uint8Array): string => encodeBase64url(sha256(bytes))

// node:crypto's one-shot `hash` (Node 20.12 on) skips the Hash object a digest otherwise costs;
// the identity of every verified object goes through it.
const oneShot: ((algorithm: string, data: string, encoding: "base64url") => string) | undefined =
  typeof (crypto as { hash?: unknown }).hash === "function" ? (crypto as { hash: (a: string, d: string, e: "base64url") => string }).hash : undefined

/** base64url (no padding) of SHA-256 of the UTF-8 bytes of `text`: 43 characters. */
export const hashTextB64 = (text: string): string =>
  oneShot !== undefined ? oneShot("sha256", text, "base64url") : crypto.createHash("sha256").update(text, "utf8").digest("base64url")
