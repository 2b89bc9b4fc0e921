// The LLM spend gateway's library side (docs/gateway.md), for agents that call models through it.
// writFetch: a `fetch` for the official OpenAI and Anthropic SDKs that signs each model request as
// a Writ call (Writ-delegated budgets). makeWritExecutor: the executor a gateway embedded as a
// library checks those calls with (its `writ` configuration). CALL_HEADER and TALLY_HEADER: the
// headers a call and its tally travel in; TOTAL_BOUND: the name of the `total` bound (micro-USD)
// that caps the spend.
export { CALL_HEADER, makeWritExecutor, TALLY_HEADER, TOTAL_BOUND, type WritExecutor, type WritExecutorConfig } from "./writ-budget.js"
export { writFetch, type WritFetchOptions } from "./writ-fetch.js"
