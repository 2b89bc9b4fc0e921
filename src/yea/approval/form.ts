// The approval form (SPEC-approval §3, approval.json `forms`). Forms allow only flat fields, so:
// `message` shows the plans in hardened Lens and why approval is needed; `plan` is a single-select
// of the offered plans (omitted when one is offered); `confirm` is where the person types the
// plan's phrase. Denied plans and plans at or above `outOfBand` are listed but never offered, and
// when nothing can be offered there is no form (the call fails closed with consent codes, §6).
// Every service-written string (summaries, effects, phrases, the reason) is escaped with
// `printable`, so it can't forge a line or hide characters in what the person reads.
import { lensDuration, lensUses } from "../lens/fields.js"
import { printable } from "../lens/printable.js"
import { HardenedReply } from "../lens/reply.js"
import type { HashedPlan } from "./plan.js"
import { shownPhrase } from "./phrase.js"
import { atLeast } from "./policy.js"
import type { Tightening } from "./tighten.js"

export interface ApprovalForm {
  readonly message: string
  readonly requestedSchema: Readonly<Record<string, unknown>>
  /** The plan hashes the person may choose from, in order. */
  readonly offered: ReadonlyArray<string>
}

/** planHash → the phrase its author asks for (absent or blank means `approve`). */
export type Phrases = Readonly<Record<string, string | undefined>>

export const phraseOf = (phrases: Phrases, planHash: string): string =>
  shownPhrase(Object.prototype.hasOwnProperty.call(phrases, planHash) ? phrases[planHash] : undefined)

/** One plan in hardened Lens: summary, effect lines, then `uses · risk · undo` (§9.2's order). */
export const planLines = (p: HashedPlan, index: number, out: Array<string>): void => {
  out.push(`[${index + 1}] ${printable(p.plan.summary)}`)
  for (const e of p.plan.effects) out.push("  " + HardenedReply.effectLine(e))
  const attrs: Array<string> = []
  const uses = lensUses(p.plan.uses)
  if (uses !== undefined) attrs.push(`uses: ${uses}`)
  attrs.push(`risk: ${p.risk}`)
  attrs.push(`undo: ${p.undoable && p.plan.undoWindow !== undefined ? lensDuration(p.plan.undoWindow) : "never"}`)
  out.push("  " + attrs.join(" · "))
}

const list = (xs: ReadonlyArray<number>) => xs.map((i) => `[${i + 1}]`).join(" ")

/** The form for these plans, or null when none can be approved in the chat. */
export const buildForm = (plans: ReadonlyArray<HashedPlan>, why: string, policy: Tightening, phrases: Phrases): ApprovalForm | null => {
  const deniedAt: Array<number> = []
  const heldAt: Array<number> = []
  const offered: Array<HashedPlan> = []
  plans.forEach((p, i) => {
    if (policy.deny.includes(p.tool)) deniedAt.push(i)
    else if (atLeast(p.risk, policy.outOfBand)) heldAt.push(i)
    else offered.push(p)
  })
  if (offered.length === 0) return null
  const out: Array<string> = [`Approval needed: ${printable(why)}.`, ""]
  plans.forEach((p, i) => {
    planLines(p, i, out)
    if (offered.includes(p)) out.push(`  to approve, type: ${printable(phraseOf(phrases, p.planHash))}`)
  })
  if (heldAt.length > 0) out.push("", `Not offered here (approve outside the chat): ${list(heldAt)}`)
  if (deniedAt.length > 0) out.push("", `Never allowed by your policy: ${list(deniedAt)}`)
  const confirm = (description: string) => ({ type: "string", title: "Confirm", description })
  const requestedSchema =
    offered.length === 1
      ? {
          type: "object",
          properties: { confirm: confirm(`Type "${printable(phraseOf(phrases, offered[0].planHash))}" to approve.`) },
          required: ["confirm"]
        }
      : {
          type: "object",
          properties: {
            plan: { type: "string", title: "Plan", oneOf: offered.map((p) => ({ const: p.planHash, title: printable(p.plan.summary) })) },
            confirm: confirm("Type the chosen plan's phrase, shown next to it above.")
          },
          required: ["plan", "confirm"]
        }
  return { message: out.join("\n"), requestedSchema, offered: offered.map((p) => p.planHash) }
}
