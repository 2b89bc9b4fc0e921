// Privacy modes (seed "Decision Ledger"). `local_full` keeps the complete event.
// `safe_telemetry` rebuilds every event from a strict allowlist: identifiers become pseudonyms
// under a local key (HMAC-SHA256; "Pseudonymization is not anonymization": whoever holds the key
// can link them), free text and fingerprint metadata are dropped, and timestamps are generalized to
// the hour. Nothing is copied that is not named below, so a member added to a Schema later does not
// leak until someone allowlists it. `aggregate_export` is in aggregate.ts.
import { encodeBase64url, sha256, utf8 } from "../kernel/index.js"
import type { EventBody } from "./events.js"
import type { Action, Directive, EstimatorState, ValueEstimate } from "./model.js"

/**
 * A local pseudonymization key: 32 random bytes. It is never written into the ledger's store: it
 * lives in a key file (mode 0600) beside the ledger, or is provided as a secret (src/app/ledger-key.ts);
 * the store keeps only `keyCheck`, which tells the right key from another without revealing it.
 */
export type TelemetryKey = Uint8Array

/** The length of a TelemetryKey in bytes. */
export const TELEMETRY_KEY_BYTES = 32

const BLOCK = 64
/** HMAC-SHA256 (RFC 2104) over the kernel's SHA-256. */
export const hmacSha256 = (key: Uint8Array, message: Uint8Array): Uint8Array => {
  const k = new Uint8Array(BLOCK)
  k.set(key.length > BLOCK ? sha256(key) : key)
  const inner = new Uint8Array(BLOCK + message.length)
  const outer = new Uint8Array(BLOCK + 32)
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = k[i] ^ 0x36
    outer[i] = k[i] ^ 0x5c
  }
  inner.set(message, BLOCK)
  outer.set(sha256(inner), BLOCK)
  return sha256(outer)
}

/** Every pseudonym has this shape: `p_` and 22 base64url characters (132 bits). */
export const PSEUDONYM = /^p_[A-Za-z0-9_-]{22}$/

/** The pseudonym of `value`; `domain` separates identifier kinds (a task id never equals an action id's pseudonym). */
export const pseudonym = (key: TelemetryKey, domain: string, value: string): string =>
  "p_" + encodeBase64url(hmacSha256(key, utf8(`${domain}\u0000${value}`))).slice(0, 22)

/** What the store keeps to recognize its key: a pseudonym of a fixed value, in a domain of its own. */
export const keyCheck = (key: TelemetryKey): string => pseudonym(key, "key-check", "mandate.ledger")

/** The held-reservations index entry of a safe_telemetry ledger: owner, action and run as the lines name them. */
export const heldPseudonyms = (key: TelemetryKey) => (h: { readonly owner: string; readonly action_id: string; readonly run_id: string }) => ({
  owner: pseudonym(key, "owner", h.owner),
  action_id: pseudonym(key, "id", h.action_id),
  run_id: pseudonym(key, "run", h.run_id)
})

/** ISO time generalized to the hour: `2026-12-01T23:00Z`. */
export const generalizeTime = (iso: string): string => `${iso.slice(0, 13)}:00Z`

const opt = <K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } => (v === undefined ? {} : { [k]: v }) as { [P in K]?: V }

/**
 * `passthrough(domain, v)` says `v` is already this key's pseudonym in `domain` (an id read back
 * from the held-reservations index, which keeps pseudonyms only), so it is not pseudonymized twice.
 */
export const makeSanitizer = (key: TelemetryKey, passthrough: (domain: string, v: string) => boolean = () => false) => {
  const p = (domain: string) => (v: string) => (passthrough(domain, v) ? v : pseudonym(key, domain, v))
  /**
   * A protocol's draw name. Writ's (section 7 step 10, src/writ/executor/decisions.ts) are `count:W`
   * and `total:NAME:W`, W a writ id's first 8 characters and NAME the total's own name: the kind
   * stays, NAME becomes a pseudonym and W 8 characters of the writ's pseudonym, so stats still folds
   * a chain's draws by kind and name. Any other name (YEA's `measure[:unit]`, §5.1, chosen by the
   * application) becomes one pseudonym whole.
   */
  const amountName = (protocol: string, name: string): string => {
    const parts = name.split(":")
    const writ = (w: string) => p("writ")(w).slice(2, 10)
    if (protocol === "writ" && parts[0] === "count" && parts.length === 2) return `count:${writ(parts[1])}`
    if (protocol === "writ" && parts[0] === "total" && parts.length === 3) return `total:${p("total")(parts[1])}:${writ(parts[2])}`
    return p("amount")(name)
  }
  const id = p("id")
  const estimator = (e: EstimatorState): EstimatorState => ({
    id: p("estimator")(e.id),
    version: e.version,
    training_data_fingerprint: e.training_data_fingerprint
  })
  const value = (v: ValueEstimate): ValueEstimate => ({
    expected_gain_usd: v.expected_gain_usd,
    uncertainty_usd: v.uncertainty_usd,
    confidence: v.confidence,
    sample_size: v.sample_size,
    provenance: v.provenance,
    estimator: estimator(v.estimator)
  })
  const action = (a: Action): Action => ({
    id: id(a.id),
    kind: a.kind,
    // Fingerprint metadata is application content: never telemetry.
    metadata: {},
    estimate: { ...a.estimate },
    ...opt("tokens_estimate", a.tokens_estimate === undefined ? undefined : { ...a.tokens_estimate }),
    ...opt("principal", a.principal === undefined ? undefined : p("principal")(a.principal)),
    ...opt("task_id", a.task_id === undefined ? undefined : p("task")(a.task_id)),
    // State and phase names may be free text chosen by the agent: pseudonyms keep them comparable.
    ...opt("state", a.state === undefined ? undefined : p("state")(a.state)),
    ...opt("phase", a.phase === undefined ? undefined : p("phase")(a.phase)),
    ...opt("retry", a.retry),
    ...opt("value", a.value === undefined ? undefined : value(a.value))
  })
  const directive = (d: Directive): Directive => {
    switch (d._tag) {
      case "modify": return { _tag: "modify", action: action(d.action) }
      case "reuse": return { _tag: "reuse", action_id: id(d.action_id) }
      case "defer": return { _tag: "defer", after_ms: d.after_ms }
      default: return { _tag: d._tag }
    }
  }
  /** The safe_telemetry form of one event body. */
  return (e: EventBody): EventBody => {
    switch (e.type) {
      case "ledger": return { type: e.type, schema: e.schema, mode: e.mode }
      case "action": return { type: e.type, run_id: p("run")(e.run_id), action: action(e.action) }
      case "decision": {
        const d = e.decision
        return {
          type: e.type,
          run_id: p("run")(e.run_id),
          decision: {
            action_id: id(d.action_id),
            mode: d.mode,
            allowed: d.allowed,
            recommended: d.recommended,
            reason: d.reason,
            directive: directive(d.directive),
            ...opt("policy", d.policy === undefined ? undefined : p("policy")(d.policy)),
            fingerprint: p("fingerprint")(d.fingerprint)
          }
        }
      }
      case "reservation":
        return {
          type: e.type,
          run_id: p("run")(e.run_id),
          action_id: id(e.action_id),
          reservation_id: p("reservation")(e.reservation_id),
          owner: p("owner")(e.owner),
          draws: e.draws.map((d) => ({ key: p("key")(d.key), limit: d.limit, amount: d.amount }))
        }
      case "settlement":
        return {
          type: e.type,
          run_id: p("run")(e.run_id),
          action_id: id(e.action_id),
          reservation_id: p("reservation")(e.reservation_id),
          state: e.state,
          reason: e.reason,
          actual: { ...e.actual },
          ...opt("tokens", e.tokens === undefined ? undefined : { ...e.tokens }),
          ...opt("estimated", e.estimated),
          kept_tokens: e.kept_tokens,
          kept_usd: e.kept_usd,
          // Amounts, not identifiers: what a settlement took past its limit is kept in every mode.
          ...opt("overrun_tokens", e.overrun_tokens),
          ...opt("overrun_usd", e.overrun_usd)
        }
      case "failure":
        return { type: e.type, run_id: p("run")(e.run_id), action_id: id(e.action_id), error: p("error")(e.error), measured: e.measured }
      case "observation":
        return {
          type: e.type,
          kind: e.kind,
          ...opt("context", e.context === undefined ? undefined : p("context")(e.context)),
          gain_usd: e.gain_usd,
          estimator: estimator(e.estimator)
        }
      case "outcome": {
        const o = e.outcome
        return {
          type: e.type,
          outcome: {
            task_id: p("task")(o.task_id),
            result: o.result,
            verified: o.verified,
            verifier: p("verifier")(o.verifier),
            ...opt("value_usd", o.value_usd),
            action_ids: o.action_ids.map(id)
          }
        }
      }
      case "protocol": {
        const d = e.decision
        return {
          type: e.type,
          decision: {
            protocol: d.protocol,
            kind: d.kind,
            principal: p("principal")(d.principal),
            subject: p("subject")(d.subject),
            ...opt("operation", d.operation === undefined ? undefined : p("operation")(d.operation)),
            ...opt("reason", d.reason),
            ...opt("amounts", d.amounts?.map((a) => ({ name: amountName(d.protocol, a.name), amount: a.amount })))
          }
        }
      }
    }
  }
}
