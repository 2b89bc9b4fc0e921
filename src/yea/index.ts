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
// Conformance    conformance.ts   `mandate yea conformance DIR`
export { ConsentRequest, yeaError, YeaError, YeaReason } from "./reason.js"
export { canonical, canonicalBytes, readCanonical } from "./canonical.js"
export { checkCommitHash, decodeProposal, Proposal, proposalHash } from "./proposal.js"
export {
  decodeKey, decodeKeyText, decodeSeed, decodeSignature, encodeKey, isKey, keyFromSeed, keyFromSeedText,
  verifyingKeyOf
} from "./keys.js"
// ./verb.js: nothing public (its names are used inside this folder only)
export {
  Proof, PROOF_WINDOW_SECONDS, type ProofSubject, proofTarget, signProof, subjectOfFrame, verifyProof
} from "./proof.js"
export { Caveat, caveatProblem, Limit, matchesCapability, type TotalsLookup } from "./caveat.js"
export { evaluateCaveats } from "./caveat-evaluation.js"
export {
  blockId, caveatBlocks, checkGrant, decodeGrant, delegateGrant, DelegationPayload, type Grant, issueRootGrant,
  Key, RawBlock, RootPayload, TOKEN_PREFIX, verifyChain
} from "./grant.js"
export {
  authorize, type AuthorizeRequest, authorizeWithReservations, executeWithTotals, reserveTotals, TOTAL_SCALE,
  totalKey
} from "./authorize.js"
export {
  checkConsentRequest, CONSENT_CODE_PREFIX, consentCaveats, consentRequestFor, decodeConsentCode,
  encodeConsentCode, issueConsentGrant
} from "./consent.js"
export { reviewConsentCode, signConsentCode } from "./approve.js"
export { Receipt, undoRequest } from "./receipt.js"
export {
  addDecimal, compareDecimal, decimal, decodeUses, formatQuantity, isQuantity, isUses, MAX_AMOUNT, MAX_SCALE,
  Quantity, quantityValue, unitsAt, Uses
} from "./measure.js"
export { checkFile, fixedClock, runConformance, summarize } from "./conformance.js"
export {
  AnswerFrame, AskFrame, BriefFrame, Capability, ClarifyFrame, CommitFrame, decodeReplyEither,
  decodeRequestEither, envelope, errorBody, ErrorFrame, EventFrame, ExpandFrame, type FinalReply, HelloFrame,
  IntentFrame, isFinal, MAX_FRAME_BYTES, More, Params, ProposalsFrame, ReceiptFrame, ReplyFrame, replyTo,
  RequestFrame, UndoFrame
} from "./frame.js"
export { encodeLine, isBlank, makeLineReader, parseFrame } from "./ndjson.js"
export {
  AutoRecord, CommitRecord, HandleRecord, ProposalRecord, YeaAutoMemory, type YeaAutoMemoryService, YeaCommits,
  type YeaCommitsService, YeaHandles, type YeaHandlesService, YeaProposals, type YeaProposalsService,
  type YeaState
} from "./state.js"
export { checkParams } from "./params.js"
export { ask, intent, makeService, plans } from "./service/index.js"
export { type ClientOptions, lensForModel, makeClient, type YeaClientShape, type YeaConnection } from "./client.js"
export { connectInProcess } from "./inproc.js"
export * as Lens from "./lens/index.js"
