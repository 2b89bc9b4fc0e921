// The Writ A2A binding (docs/adoption.md section 2b), message level: schema.ts (the A2A shapes
// read), server.ts (call in, task out; CancelTask with a revoke; Agent Card entry), client.ts.
export { a2aError, A2aError, A2aReason } from "./errors.js"
export { ACK_KEY, CardExtension, DataPart, TALLY_KEY, Task } from "./schema.js"
export { callFrom, cardExtension, handleCancel, handleMessage, readCancel, readJson, readMessage } from "./server.js"
export { callMessage, cancelParams, verifyTask } from "./client.js"
