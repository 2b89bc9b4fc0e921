// Transports: the Writ HTTP binding (spec section 10): server, client, peers, `serve`.
export * as WritHttp from "./writ-http/index.js"
