// Composition roots: where files are read, handler modules loaded and stores chosen, so that the
// protocols, stores and transports below stay free of them (DESIGN.md).
export { describeServeError, handlerLoadFailure, readSeedFile, ServeError } from "./inputs.js"
export { loadHandler, readBindingsFile, serveExecutor, type ServeOptions, startExecutor } from "./writ-serve.js"
export { startGate } from "./writ-gate.js"
export { runFiles } from "./writ-files.js"
export { initLedger, openLedger, type OpenOptions, openStores, parseLocation, recordDecisions } from "./ledger-open.js"
export { type A2aServeOptions, startA2a } from "./writ-a2a-serve.js"
