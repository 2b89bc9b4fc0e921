// The Writ A2A binding (docs/adoption.md section 2b), message level: schema.ts (the A2A shapes
// read), server.ts (call in, task out; CancelTask with a revoke; Agent Card entry), client.ts.
export * from "./errors.js"
export * from "./schema.js"
export * from "./server.js"
export * from "./client.js"
