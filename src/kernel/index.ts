// The kernel: encodings and cryptography shared by every protocol. Protocol rules live in the
// protocol modules; the kernel only provides the machinery they parameterise.
export {
  isJsonObject, type Json, jsonDepth, JsonError, type JsonErrorReason, type JsonObject, parseJson,
  parseJsonEffect, type Reading, readJson, scanDepth, type Span
} from "./json.js"
export { compareKeys, encodeCanonical, utf8 } from "./canonical.js"
export { base64urlLength, decodeBase64url, encodeBase64url } from "./base64url.js"
export { decodeBase58, encodeBase58 } from "./base58.js"
export { hashB64, hashTextB64, sha256 } from "./hash.js"
export {
  isAcceptablePublicKey, isSmallOrderPoint, publicKeyFromSeed, publicKeyObject, sign, signerFromSeed,
  SMALL_ORDER_ENCODINGS, verify, verifyWithKeyObject
} from "./ed25519.js"
export {
  DID_KEY_LENGTH, didKeyBytes, didKeyFromPublicKey, hasDidKeyShape, isDidKey, publicKeyFromDidKey
} from "./didkey.js"
export { RandomBytes, Signer, type SignerShape } from "./services.js"
export { unixSeconds } from "./clock.js"
export {
  copyString, DEFAULT_VERIFICATION_CACHE_BYTES, ENTRY_OVERHEAD_BYTES, judgeKeyBytes, KEY_VALUE_BYTES,
  VerificationCache, type VerificationCacheShape, verificationCacheSync, type VerificationCacheSync,
  verifyingKey, type VerifyingKey, verifyingKeySync
} from "./verification-cache.js"
