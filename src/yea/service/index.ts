// The service side of YEA: declare capabilities (define.ts), run them (runtime.ts).
export { ask, type CapabilitySpec, clarify, intent, plans, type ServiceSpec } from "./define.js"
export { makeService, type YeaServiceRuntime } from "./runtime.js"
export { AUTO_MEMORY_SECONDS, HANDLE_SECONDS } from "./verbs.js"
