// Mandate's public API, re-exported by concept. Embed a protocol as Effect Layers: the services
// (Signer, RandomBytes, Reservations, Atomic, the Writ stores, Executor) are tags; src/store provides
// their Layers.
export * as Kernel from "./kernel/index.js"
export * as Accounting from "./accounting/index.js"
export * as Writ from "./writ/index.js"
export * as WritExecutor from "./writ/executor/index.js"
export * as Yea from "./yea/index.js"
export * as Store from "./store/index.js"
export * as Bind from "./bind/index.js"
export * as App from "./app/index.js"
