// `writ gate` (docs/writ-gate.md): Writ in front of an HTTP API that has never heard of it.
// mapping.ts (the mapping file, checked at start), contract.ts (the request contract and the
// rebuilt request), upstream.ts (the executor's application: the API call), server.ts (HTTP).
export { gateError, GateError, GateReason } from "./errors.js"
export { fold, readMapping } from "./mapping.js"
export { checkRequest, matchRoute, rebuild } from "./contract.js"
export { type InFlightMap, makeUpstreamApplication, MAX_RESPONSE_BYTES } from "./upstream.js"
export { listenGate } from "./server.js"
