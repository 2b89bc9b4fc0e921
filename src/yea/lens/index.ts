/**
 * Lens (SPEC §9) and budgets (SPEC §8): the model's view of YEA replies and the fitting of replies
 * to a token budget with `EXPAND` handles for the rest.
 */
export { est } from "./estimate.js"
export { isUnprintable, printable } from "./printable.js"
export { compactJson, Hardened, isBare, leanScalar, leanString, lensValue, makeLean, Spec } from "./value.js"
export { isWellFormedUses, lensDuration, lensProposalUndo, lensQuantity, lensReceiptUndo, lensTime, lensUses, MAX_TIME } from "./fields.js"
export { effectLine, HardenedReply, lensReply, lensReplyHardened, makeReplyLens, SpecReply } from "./reply.js"
export {
  DEFAULT_BUDGET,
  type Elided,
  type FitOptions,
  type Fitted,
  fitReply,
  fitReplyEffect,
  fitSteps,
  type More,
  randomHandle,
  STRING_KEEP
} from "./budget.js"
export { expandBody, expandSlice, expandSliceEffect } from "./expand.js"
export { checkLensCase, checkPrintableCase } from "./conformance.js"
