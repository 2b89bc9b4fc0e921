// Where a ledger lives and the Layers that open it are the composition root's (src/app/ledger-open.ts),
// shared by `writ serve`, the demos and `mandate ledger`; re-exported here for the CLI's modules.
export * from "../app/ledger-open.js"
