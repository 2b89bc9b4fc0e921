// SQLite stores, the embedded default: one file, WAL, every atomic step one transaction.
export * as Client from "./client.js"
export * as Reservations from "./reservations.js"
export * as WritStores from "./writ-stores.js"
export * as Yea from "./yea.js"
export * as GroupCommit from "./group-commit.js"
export * as Ledger from "./ledger.js"
export * as Approval from "./approval.js"
