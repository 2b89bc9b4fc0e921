/** SHA-256 and the base64url hash form used for object identities (Writ v0.1 section 1.5). */
import { createHash } from "node:crypto"
import { encodeBase64url } from "./base64url.js"

export const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash("sha256").update(bytes).digest())

/** base64url (no padding) of SHA-256: 43 characters. */
export const hashB64 = (bytes: Uint8Array): string => encodeBase64url(sha256(bytes))
