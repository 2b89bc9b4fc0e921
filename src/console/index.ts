// `mandate console`: a read-only local web page over an executor's store and a decision ledger.
// By concept:
//   reason.ts       the console's reason codes and ConsoleError
//   api.ts          the JSON wire: one Schema per object
//   audit.ts        the section 9.3 audit record and call store, by keyset pages
//   tally-view.ts   tally trees, section 6.2 per hop, chains and narrowing (section 4)
//   ledger-view.ts  budgets, decisions, stats, replay, hash chain; the lines a page at a time
//   spend.ts        spend per principal, protocol and budget over time   decimal.ts  its exact sums
//   stores.ts       what it is given, opened read-only
//   assets.ts       the page bundled by esbuild        style.ts  its style sheet
//   server.ts       the HttpRouter, the Host and Origin checks   body.ts  a body read with its bound
//   listen.ts       serving on loopback, with a connection cap per peer and idle timeouts
//   web/            the page's source (browser code)
export { consoleError, ConsoleError, ConsoleReason } from "./reason.js"
export { AuditPage, AuditRowView } from "./api.js"
export { ConsoleStore, makeConsoleStore, whereOf } from "./audit.js"
export { narrowing, treeView, writView } from "./tally-view.js"
export { ledgerView, linesPage, type LedgerSources } from "./ledger-view.js"
export { bucketOf, ledgerSpend, shortId, type SpendEntry, spendView } from "./spend.js"
export { ConsoleAudit, ConsoleConfig, type ConsoleConfigShape, ConsoleLedger, sourcesLayer } from "./stores.js"
export { bundledAssets, ConsoleAssets } from "./assets.js"
export { consoleApp, hostName, LOOPBACK_NAMES, sameOrigin } from "./server.js"
export { CONSOLE_LIMITS, consoleHttpServer, type ConsoleLimits, serveConsole, type ConsoleListenOptions } from "./listen.js"
