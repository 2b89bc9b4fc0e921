// Consent codes for the approve tests (library and CLI): a proposal hashed as §5.1 says, its
// consent request (§6.6), and variants that must be refused. Fixed seeds from test/yea/_helpers.
import { Either } from "effect"
import { consentRequestFor, encodeConsentCode } from "../../src/yea/consent.js"
import { proposalHash, type Proposal } from "../../src/yea/proposal.js"
import { agentKey, principalKey } from "../yea/_helpers.js"

/** Far in the future, so CLI runs (on the real clock) see it unexpired. */
export const LATER = 4_000_000_000

export const proposalOf = (over: Record<string, unknown> = {}): Proposal => {
  const base = {
    id: "p_cli",
    capability: "shop.order",
    summary: "Order 4 meals",
    effects: [{ op: "create" as const, target: "order", detail: "4× Pad Thai" }, { op: "create" as const, target: "charge", detail: "43.95 USD" }],
    uses: { spend: { amount: 4395, scale: 2, unit: "USD" } },
    risk: "low" as const,
    undo: { window: 7200 },
    expires: LATER,
    ...over
  }
  return { ...base, hash: Either.getOrThrow(proposalHash(base)) } as Proposal
}

export interface CodeParts {
  readonly proposal?: Proposal
  readonly detail?: Record<string, unknown>
  readonly consent?: Record<string, unknown>
  readonly agent?: string
  readonly principal?: string
}

/** A `pc1.` code; `detail`/`consent` override what the proposal would give. */
export const codeOf = (parts: CodeParts = {}): string => {
  const p = parts.proposal ?? proposalOf()
  const consent = { ...consentRequestFor(p, "shop.example", parts.principal ?? principalKey), ...parts.consent }
  return Either.getOrThrow(encodeConsentCode({ consent: consent as never, detail: parts.detail ?? p, agent: parts.agent ?? agentKey }))
}
