// Writ over MCP (docs/adoption.md 2a, docs/bindings.md): the binding's codes (reason.ts), the
// result both sides render (present.ts), the server side (server.ts), the client checks
// (client.ts), and the proxy for any MCP client (proxy.ts, with policy.ts, receipts.ts, rpc.ts).
export { type McpClientError, type McpPolicyError, McpReason } from "./reason.js"
export { advertisementOf, ERROR_META, present, TALLY_META, toolOp } from "./present.js"
export { callTool, capabilities, type McpTool, serveTools, toolSet, type ToolSet } from "./server.js"
export { check, type CheckError, params, ready, verified } from "./client.js"
export { PinFile, pinOf, pinsOf } from "./policy.js"
export { receipt, Receipts } from "./receipts.js"
export { listAllTools, rawPeer, RpcError, send } from "./rpc.js"
export { runProxy } from "./proxy.js"
