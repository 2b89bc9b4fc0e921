// Mandate's public API, re-exported by concept. Embed a protocol as Effect Layers: the services
// (Signer, RandomBytes, Reservations, Atomic, the Writ stores, Executor, the LedgerStore) are tags;
// src/store provides their Layers (Store.Sqlite.Ledger, ...), and App opens them from a location
// (App.openLedger, App.recordDecisions).
export * as Kernel from "./kernel/index.js"
export * as Accounting from "./accounting/index.js"
export * as Writ from "./writ/index.js"
export * as WritExecutor from "./writ/executor/index.js"
export * as Yea from "./yea/index.js"
export * as Ledger from "./ledger/index.js"
export * as Gateway from "./gateway/index.js"
export * as Store from "./store/index.js"
export * as Bind from "./bind/index.js"
export * as App from "./app/index.js"
export * as Console from "./console/index.js"
// The example services sit above the library and are their own subpath ("./examples" in package.json
// exports): the root never imports them (docs/layout.md, "Imports").
