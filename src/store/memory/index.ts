// In-memory stores (tests): one lock and an undo journal per atomic step.
export * as Journal from "./atomic.js"
export * as Reservations from "./reservations.js"
export * as WritStores from "./writ-stores.js"
export * as Yea from "./yea.js"
export * as Ledger from "./ledger.js"
