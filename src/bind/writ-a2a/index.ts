// The Writ A2A binding (docs/adoption.md section 2b; A2A 1.0, with 0.3 read and written for peers
// that speak it): schema.ts (the 1.0 shapes), v03.ts (the 0.3 shapes and their conversion),
// server.ts (call in, task out; CancelTask with a revoke; Agent Card entry), client.ts (message
// out, task verified), rpc.ts, rest.ts and http.ts (an agent endpoint over JSON-RPC and HTTP+JSON),
// http-client.ts and rest-client.ts (a client of any A2A agent), sdk.ts (the A2A JavaScript SDK's
// server passing calls and revokes).
export { a2aError, A2aError, A2aReason, A2aRpcCode } from "./errors.js"
export {
  A2A_LEGACY_VERSION, A2A_VERSION, type A2aVersion, ACK_KEY, AGENT_CARD_PATH, AgentCard, CALL_KEY, CardExtension, Message, Part,
  REVOKE_HEADER, REVOKE_KEY, TALLY_KEY, Task, TaskState
} from "./schema.js"
export { messageFromV03, messageToV03, taskFromV03, taskToV03, V03Message, V03Task } from "./v03.js"
export { callFrom, cardExtension, handleCancel, handleMessage, MAX_MESSAGE_BYTES, readCancel, readJson, readMessage } from "./server.js"
export { callMessage, cancelParams, tallyFrom, type VerifiedTask, verifyTask } from "./client.js"
export { handleRpc, RpcRequest, RpcResponse } from "./rpc.js"
export { handleRest, type RestAnswer, type RestRequest } from "./rest.js"
export { a2aHttpApp, agentCard, listenA2a } from "./http.js"
export { type A2aTransport, resolvePeer, sendCall, sendRevoke } from "./http-client.js"
export { revokeThroughCancel, writAgentExecutor } from "./sdk.js"
