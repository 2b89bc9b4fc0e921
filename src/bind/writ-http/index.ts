export * from "./server.js"
export * from "./client.js"
export * from "./peer.js"
export * from "./rate-limit.js"
