// The kernel: encodings and cryptography shared by every protocol. Protocol rules live in the
// protocol modules; the kernel only provides the machinery they parameterise.
export * from "./json.js"
export * from "./canonical.js"
export * from "./base64url.js"
export * from "./base58.js"
export * from "./hash.js"
export * from "./ed25519.js"
export * from "./didkey.js"
export * from "./services.js"
export * from "./clock.js"
export * from "./verification-cache.js"
