// YEA (spec ../shared/reference/yea/SPEC.md): the public API, by concept.
//
// Reason codes   reason.ts    the section 7 codes (one Schema.Literal union) and `YeaError`
// Canonical      canonical.ts section 10 (keys by code point), proposal.ts the section 5.1 hash
// Keys, proofs   keys.ts proof.ts verb.ts   `ed25519:` keys, proof of possession (section 6.5)
// Grants         grant.ts caveat.ts authorize.ts consent.ts receipt.ts   sections 6.2 to 6.6
// Approving      approve.ts   a `pc1.` consent code reviewed and signed (§6.6, docs/cli.md)
// Measures       measure.ts   `uses` quantities as exact decimals (section 5.1)
// Lens, budgets  lens/        section 9 renderings, section 8 estimate, fitting and EXPAND
// Frames         frame.ts ndjson.ts   §2 frames, one Schema per verb and reply kind; NDJSON lines
// Runtime        state.ts (stores) params.ts (§4.1.1) service/ (the service side) client.ts inproc.ts
// Examples       examples/   the calendar and the shop of the demo and the benchmarks
// Conformance    conformance.ts   `mandate yea conformance DIR`
export * from "./reason.js"
export * from "./canonical.js"
export * from "./proposal.js"
export * from "./keys.js"
export * from "./verb.js"
export * from "./proof.js"
export * from "./caveat.js"
export * from "./grant.js"
export * from "./authorize.js"
export * from "./consent.js"
export * from "./approve.js"
export * from "./receipt.js"
export * from "./measure.js"
export * from "./conformance.js"
export * from "./frame.js"
export * from "./ndjson.js"
export * from "./state.js"
export * from "./params.js"
export * from "./service/index.js"
export * from "./client.js"
export * from "./inproc.js"
export * as Examples from "./examples/index.js"
export * as Lens from "./lens/index.js"
