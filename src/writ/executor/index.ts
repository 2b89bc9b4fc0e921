// The Writ executor (spec section 7 to 9): the Executor service, the services it needs from
// outside the protocol (Application, RootPolicy, PeerBindings, Forwarder), the stores of section 9
// as services, and the scenario runner of section 14.1. Store implementations are in src/store.
export * from "./executor.js"
export * from "./services.js"
export * from "./stores.js"
export * from "./tally-sign.js"
export * from "./scenario.js"
