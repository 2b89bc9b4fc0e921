// The bindings: each carries a protocol over a transport and owns the I/O the protocols leave out
// (they import kernel, accounting and the protocols, never a store: a composition root in app/ or
// the CLI picks the store). One folder per binding, named protocol-transport:
//   writ-http/    Writ over HTTP (spec section 10): server, client, mTLS peers, listening
//   writ-a2a/     Writ over A2A messages (adoption.md 2b)
//   writ-gate/    the writ gate: an HTTP API as the executor's application (docs/writ-gate.md)
//   writ-file/    Writ as files beside the work
//   writ-mcp/     Writ over MCP: server and client sides, the proxy (bindings.md)
//   yea-stream/   YEA over NDJSON streams (SPEC §2.3); yea-tcp/ over TCP and TLS; yea-http/ over
//                 HTTP; yea-stdio/ over a child's stdio; yea-connect/ one connect() for them all
//   yea-openapi/  the OpenAPI adapter's upstream over HTTP (src/yea/openapi is the adapter)
//   mcp/          YEA for MCP servers: job tools, guard(), the undo tool, serving, the bridge
//   peer-connections.ts  connections per peer, shared by every listener (a share of the cap each)
// Writ over HTTP (spec section 10): server, client, peers, `serve`.
export * as WritHttp from "./writ-http/index.js"
// YEA transports (SPEC §2.3): NDJSON streams, TCP and TLS.
export * as YeaStream from "./yea-stream/serve.js"
export * as YeaStreamClient from "./yea-stream/client.js"
export * as YeaTcp from "./yea-tcp/server.js"
export * as YeaTcpClient from "./yea-tcp/client.js"
export * as YeaHttp from "./yea-http/server.js"
export * as YeaHttpClient from "./yea-http/client.js"
export * as YeaStdio from "./yea-stdio/index.js"
export * as YeaConnect from "./yea-connect/index.js"
// Writ over A2A (adoption.md 2b), message level.
export * as WritA2a from "./writ-a2a/index.js"
// writ gate (docs/writ-gate.md): the mapping, the request contract, the API as the application.
export * as WritGate from "./writ-gate/index.js"
// The file binding: a call and its tally as files beside the work.
export * as WritFile from "./writ-file/index.js"
// Writ over MCP: the binding's server and client sides and the proxy (bindings.md).
export * as WritMcp from "./writ-mcp/index.js"
// YEA for MCP servers: job tools, guard(), the undo tool, serving, the bridge.
export * as YeaMcp from "./mcp/index.js"
// The OpenAPI adapter's upstream over HTTP (`mandate yea openapi`).
export * as YeaOpenapi from "./yea-openapi/index.js"
