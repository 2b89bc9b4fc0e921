// YEA for MCP (SPEC-mcp-ts, SPEC-bridge): job tools and guard() on the SDK 1.x McpServer, the
// undo tool, the Streamable HTTP front end and the bridge.
export * from "./context.js"
export * from "./call.js"
export * from "./job-types.js"
export * from "./apply.js"
export * from "./render.js"
export * from "./job.js"
