// The Vercel AI SDK's MCP client (`@ai-sdk/mcp`) against every Mandate MCP surface, over
// its stdio transport and Streamable HTTP (matrix.ts), each tool run through the AI SDK tool's
// own `execute`.
import { aiSdk } from "./clients.js"
import { describeSurfaces } from "./matrix.js"

describeSurfaces(aiSdk)
