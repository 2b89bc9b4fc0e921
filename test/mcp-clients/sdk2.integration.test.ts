// The MCP SDK 2.x client (`@modelcontextprotocol/client`) against every Mandate MCP
// surface, over stdio and Streamable HTTP (matrix.ts). Mandate itself runs on SDK 1.x.
import { sdk2 } from "./clients.js"
import { describeSurfaces } from "./matrix.js"

describeSurfaces(sdk2)
