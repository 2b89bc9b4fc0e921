// The contract of every directive (seed "Directives": "Core v0.2 decisions currently produce allow
// or deny. Other directives are explicit extension points for adapters and future policies").
// The built-in policies only ever allow or deny; a policy issues the others through
// `directivePolicy` (policy.ts). What each one means is decided here, once, and the guard follows it:
//
//   allow         the action runs (its draws reserved, then settled).
//   deny          enforce: it does not run, nothing stays reserved, ActionDenied.
//   modify        enforce: the proposed action is recorded as refused and the directive's action
//                 is guarded in its place, through `GuardOptions.modified` (how to run the changed
//                 action is the caller's to say). Evaluated once: a modify of the replacement is not
//                 followed. Without `modified` the adapter cannot apply it: DirectiveIssued.
//   defer         enforce: not now. Nothing runs or is reserved; DirectiveIssued carries
//                 `after_ms`, after which the caller may propose the action again.
//   reuse         enforce: do not run; the result of the recorded action `action_id` answers it.
//                 DirectiveIssued; nothing is reserved or spent.
//   stop          enforce: this action and every later one through the same guard are refused
//                 (DirectiveIssued with the stop decision): the agent should propose nothing more.
//   force_verify  enforce: not before a `verify` action has run; DirectiveIssued. The caller runs a
//                 verify action (which the verification reserve keeps budget for) and proposes
//                 this one again; the policy decides when it is satisfied.
//
// In shadow and recommend every directive is recorded as the recommendation and the action runs
// as it was proposed (seed: "every proposed action is applied, but the recommendation is
// preserved"): no directive changes what a non-blocking mode does.
import type { Directive, Mode } from "./model.js"

/** What the guard does with the directive a policy issued. */
export type DirectiveEffect =
  | "run" //        allow, and every directive in a non-blocking mode
  | "refuse" //     deny: ActionDenied
  | "replace" //    modify with a way to run the replacement
  | "issue" //      defer, reuse, force_verify, a modify that cannot be applied: DirectiveIssued
  | "stop" //       stop: DirectiveIssued now and for every later action of the guard

export const directiveEffect = (mode: Mode, directive: Directive, canModify: boolean): DirectiveEffect => {
  if (mode !== "enforce" || directive._tag === "allow") return "run"
  switch (directive._tag) {
    case "deny": return "refuse"
    case "modify": return canModify ? "replace" : "issue"
    case "stop": return "stop"
    case "defer":
    case "reuse":
    case "force_verify":
      return "issue"
  }
}
