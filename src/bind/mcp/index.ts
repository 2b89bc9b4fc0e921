// YEA for MCP (SPEC-mcp-ts, SPEC-bridge): job tools and guard() on the SDK 1.x McpServer, the
// undo tool, the Streamable HTTP front end and the bridge.
export { makeApprovals, StartupRefused, type YeaMcpOptions } from "./context.js"
// ./call.js: nothing public (its names are used inside this folder only)
export { type Applied } from "./job-types.js"
// ./apply.js: nothing public (its names are used inside this folder only)
export { safe, textResult } from "./render.js"
export { guard, job } from "./job.js"
