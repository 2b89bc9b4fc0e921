// The Writ A2A binding (docs/adoption.md section 2b; A2A 1.0, with 0.3 read and written for peers
// that speak it): schema.ts (the 1.0 shapes), v03.ts (the 0.3 shapes and their conversion),
// server.ts (call in, task out; CancelTask with a revoke; Agent Card entry), client.ts (message
// out, task verified), rpc.ts and http.ts (an agent endpoint over JSON-RPC), http-client.ts (a
// client of any A2A agent), sdk.ts (the A2A JavaScript SDK's server passing calls and revokes).
export * from "./errors.js"
export * from "./schema.js"
export * from "./v03.js"
export * from "./server.js"
export * from "./client.js"
export * from "./rpc.js"
export * from "./http.js"
export * from "./http-client.js"
export * from "./sdk.js"
