// `writ mcp-gate` (docs/mcp-gate.md): Writ in front of a plain MCP server. codes.ts (the codes it
// signs), upstream.ts (the executor's application: the server's tools), server.ts (toward the client).
export * from "./codes.js"
export * from "./upstream.js"
export * from "./server.js"
