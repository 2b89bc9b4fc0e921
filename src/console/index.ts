// `mandate console`: a read-only local web page over an executor's store and a decision ledger
// (issue 14). By concept:
//   reason.ts       the console's reason codes and ConsoleError
//   api.ts          the JSON wire: one Schema per object
//   audit.ts        the section 9.3 audit record and call store, by keyset pages
//   tally-view.ts   tally trees, section 6.2 per hop, chains and narrowing (section 4)
//   ledger-view.ts  budgets, spend, decisions, stats, replay, hash chain
//   stores.ts       what it is given, opened read-only
//   assets.ts       the page bundled by esbuild        style.ts  its style sheet
//   server.ts       the HttpRouter and the Host check  listen.ts serving on loopback
//   web/            the page's source (browser code)
export * from "./reason.js"
export * from "./api.js"
export { ConsoleStore, makeConsoleStore, whereOf } from "./audit.js"
export { narrowing, treeView, writView } from "./tally-view.js"
export { ledgerView, type LedgerSources } from "./ledger-view.js"
export { ConsoleAudit, ConsoleConfig, type ConsoleConfigShape, ConsoleLedger, sourcesLayer } from "./stores.js"
export { bundledAssets, ConsoleAssets } from "./assets.js"
export { consoleApp, hostName, LOOPBACK_NAMES } from "./server.js"
export { serveConsole, type ConsoleListenOptions } from "./listen.js"
