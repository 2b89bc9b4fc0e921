// PostgreSQL stores, shared by many workers: reservations (row locks in key order), YEA, and the
// Writ executor stores with their admission gate and worker identities.
export * as Client from "./client.js"
export * as Reservations from "./reservations.js"
export * as Yea from "./yea.js"
export * as WritGate from "./writ-gate.js"
export * as WritStores from "./writ-stores.js"
export * as WritWorker from "./writ-worker.js"
export * as Ledger from "./ledger.js"
