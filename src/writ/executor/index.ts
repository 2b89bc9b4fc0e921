// The Writ executor (spec section 7 to 9): the Executor service, the services it needs from
// outside the protocol (Application, RootPolicy, PeerBindings, Forwarder), the stores of section 9
// as services, and the scenario runner of section 14.1. Store implementations are in src/store.
export {
  type CallAnswer, callAnswerJson, Executor, type ExecutorService, layer, makeExecutorWith, type RevokeAnswer,
  revokeAnswerJson
} from "./executor.js"
export {
  Application, APPLICATION_ERROR, type ApplicationService, AUDIT_SUPPRESSED, cancelOnStop,
  type ForwardedAnswer, Forwarder, type ForwarderService, type Operation, type Outcome, Peer, PeerBindings,
  type RevokeSigner, RootPolicy, STORE_UNAVAILABLE
} from "./services.js"
export {
  type AcceptedCall, AckStore, type AuditEntry, AuditLog, type CallEntry, CallStore, DelegationStore,
  type HeldTally, type IssuedWrit, type KeptAck, type ReceivedSub, type RecordedRevoke, type Reversal,
  ReversalStore, RevokeStore, StoreError, TallyStore, type WritStores, writStoresContext,
  type WritStoreServices
} from "./stores.js"
export { hashOf, identity, signOutcome } from "./tally-sign.js"
export {
  decodeScenario, failureLines, type JsonObject, runScenario, Scenario, ScenarioFileError, type ScenarioResult,
  type ScenarioStore, type StoreContext
} from "./scenario.js"
