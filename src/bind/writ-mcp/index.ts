// Writ over MCP (docs/adoption.md 2a, docs/bindings.md): the binding's codes (reason.ts), the
// result both sides render (present.ts), the server side (server.ts), the client checks
// (client.ts), and the proxy for any MCP client (proxy.ts, with policy.ts, receipts.ts, rpc.ts).
export * from "./reason.js"
export * from "./present.js"
export * from "./server.js"
export * from "./client.js"
export * from "./policy.js"
export * from "./receipts.js"
export * from "./rpc.js"
export * from "./proxy.js"
export * from "./methods.js"
