// The approval contract (../shared/reference/yea/docs/SPEC-approval.md), by section:
//
// §1 plan hash          plan.ts
// §2 policy             policy.ts (the signed policy, `decide`), tighten.ts (deny, outOfBand)
// §3 the form, phrase   form.ts, phrase.ts
// §4 the state          state.ts (plaintext, checkState, the HMAC codec)
// §5 checking answers   judge.ts
// §6 consent codes      consent.ts
// §7 undo               undo.ts, receipt.ts
// §8 the store          store.ts (the tag and the memory store)
// outcome codes         reason.ts
export * from "./reason.js"
export * from "./plan.js"
export * from "./phrase.js"
export * from "./policy.js"
export * from "./tighten.js"
export * from "./form.js"
export * from "./state.js"
export * from "./judge.js"
export * from "./consent.js"
export * from "./receipt.js"
export * from "./store.js"
export * from "./undo.js"
