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
export {
  ApprovalStoreError, AskAgain, ConsentInvalid, denied, Denied, InvalidInput, InvalidPhrase, NeedsApproval,
  NotApproved, outOfBand, OutOfBand, refused, Refused, storeUnavailable, UndoRefused
} from "./reason.js"
export { checkInput, HashedPlan, hashPlan, hashPlans, inputHash, PlanSpec } from "./plan.js"
export { effectivePhrase, phraseMatches } from "./phrase.js"
export { decide, type Decision, toLedgerUnits } from "./policy.js"
export { DEFAULT_TIGHTENING, isBlocking, mergeTightening, readTightening, type Tightening } from "./tighten.js"
export { buildForm, planLines } from "./form.js"
export {
  checkState, keyedCodecLayer, makeCodec, newState, randomCodecLayer, RequestState, RequestStateCodec
} from "./state.js"
export { type Answer, judgeAnswer } from "./judge.js"
export {
  approveJobCode, checkJobConsent, decodeJobConsentCode, jobConsentCode, type JobConsentRequest,
  signJobConsent
} from "./consent.js"
export { JobReceipt } from "./receipt.js"
export { ApprovalStore, type ApprovalStoreShape, makeMemoryApprovalStore, memoryApprovalStore } from "./store.js"
export { undoJob } from "./undo.js"
