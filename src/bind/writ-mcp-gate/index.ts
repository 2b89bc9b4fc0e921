// `writ mcp-gate` (docs/mcp-gate.md): Writ in front of a plain MCP server. codes.ts (the codes it
// signs), upstream.ts (the executor's application: the server's tools), server.ts (toward the client).
// The composition root is app/writ-mcp-gate.ts (`startMcpGate`); these are its parts.
export { McpGateCode, RESULT_TOO_LARGE, TOOL_ERROR, UPSTREAM_ERROR } from "./codes.js"
export { liveness, type Liveness, MAX_RESULT_BYTES, type Requests, UPSTREAM_TIMEOUT, upstreamApplication, type UpstreamOptions } from "./upstream.js"
export { gateCapabilities, type GateServeOptions, serveGate, type Upstream } from "./server.js"
