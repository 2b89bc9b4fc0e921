// The unsigned tightening (the policy guide, "Two files called policy"; approval.json
// `tightening`): `~/.yea/policy.json` or the server's options may only narrow the signed policy.
// `deny` stops a tool from running at all; `outOfBand` sends plans at or above a risk to
// `yea approve` instead of the chat form. Unknown or bad members are ignored with a warning; the
// front end decides whether a warning about `deny` refuses calls (SPEC-mcp-ts `tighten`: it does).
import { Predicate } from "effect"
import type { RiskLevel } from "../caveat.js"
import { RANK } from "./policy.js"

export interface Tightening {
  readonly deny: ReadonlyArray<string>
  readonly outOfBand: RiskLevel
}

export interface ReadTightening extends Tightening {
  readonly warnings: ReadonlyArray<string>
}

export const DEFAULT_TIGHTENING: Tightening = { deny: [], outOfBand: "high" }

const isRisk = (v: unknown): v is RiskLevel => v === "low" || v === "medium" || v === "high"

/** Reads a parsed `policy.json`. Never fails: what can't be read is reported in `warnings`. */
export const readTightening = (file: unknown): ReadTightening => {
  if (!Predicate.isRecord(file) || Array.isArray(file)) {
    return { ...DEFAULT_TIGHTENING, warnings: ["the policy file is not a JSON object; ignored"] }
  }
  const warnings: Array<string> = []
  let deny: ReadonlyArray<string> = []
  let oob: RiskLevel = DEFAULT_TIGHTENING.outOfBand
  for (const k of Object.keys(file)) {
    const v = file[k]
    if (k === "deny") {
      if (Array.isArray(v) && v.every((x) => typeof x === "string")) deny = v as ReadonlyArray<string>
      else warnings.push(`ignored "deny": bad value`)
    } else if (k === "outOfBand") {
      if (isRisk(v)) oob = v
      else warnings.push(`ignored "outOfBand": bad value`)
    } else warnings.push(`ignored ${JSON.stringify(k)}: unknown field`)
  }
  return { deny, outOfBand: oob, warnings }
}

/** Two tightenings together: `deny` is the union, `outOfBand` the stricter (lower) level. */
export const mergeTightening = (a: Tightening, b: Tightening): Tightening => ({
  deny: [...new Set([...a.deny, ...b.deny])],
  outOfBand: RANK[a.outOfBand] <= RANK[b.outOfBand] ? a.outOfBand : b.outOfBand
})

/** A warning that makes `deny` unknowable: the server then refuses every job call (fail closed). */
export const isBlocking = (warning: string): boolean => !warning.endsWith("unknown field")
