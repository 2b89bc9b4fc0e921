// LangChain's MCP adapters (`@langchain/mcp-adapters` on `@langchain/core`) against every
// Mandate MCP surface, over stdio and Streamable HTTP (matrix.ts), each tool invoked as a LangChain
// tool with a tool call, as an agent does.
import { langchain } from "./clients.js"
import { describeSurfaces } from "./matrix.js"

describeSurfaces(langchain)
