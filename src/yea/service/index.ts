// The service side of YEA: declare capabilities (define.ts), run them (runtime.ts).
export * from "./define.js"
export * from "./runtime.js"
export { AUTO_MEMORY_SECONDS, HANDLE_SECONDS } from "./verbs.js"
