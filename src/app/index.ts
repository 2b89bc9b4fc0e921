// Composition roots: where files are read, handler modules loaded and stores chosen, so that the
// protocols, stores and transports below stay free of them (DESIGN.md).
export * from "./inputs.js"
export * from "./writ-serve.js"
export * from "./writ-gate.js"
export * from "./writ-files.js"
export * from "./ledger-open.js"
export * from "./writ-a2a-serve.js"
