// `writ gate` (docs/writ-gate.md): Writ in front of an HTTP API that has never heard of it.
// mapping.ts (the mapping file, checked at start), contract.ts (the request contract and the
// rebuilt request), upstream.ts (the executor's application: the API call), server.ts (HTTP).
export * from "./errors.js"
export * from "./mapping.js"
export * from "./contract.js"
export * from "./upstream.js"
export * from "./server.js"
