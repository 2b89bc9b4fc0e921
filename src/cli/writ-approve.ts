// `mandate writ approver` and `mandate writ approve`: approval as delegation (Appendix E,
// docs/approval.md). `approver` names the key that must approve a refused call: the issuer of the
// first writ in its chain, root first, that does not admit it. `approve` signs the writ that
// replaces one position of the chain: run first by the approver (at the approval point), then by
// each holder below with `--above` the new chain so far, until the new chain is as long as the old.
// No writ read from a file is signed as given: each is built by `approveAt` and checked by
// section 4 before it is signed (section 7.5).
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { Json, JsonObject } from "../kernel/json.js"
import { type Action, type ApprovalError, approvalPoint, approveAt } from "../writ/approval.js"
import { cliError, forceOption, isObject, keyLayer, readChainFile, readObjectFile, runCommand, writeJson } from "./writ-io.js"
import { seconds } from "./writ-bounds.js"

const callOption = Options.file("call").pipe(Options.withDescription("The refused call (a call file: its op and args, and its chain unless --chain)"))
const chainOption = Options.file("chain").pipe(Options.optional, Options.withDescription("The chain the call was refused under (default: the call's own chain)"))

/** The refused call's action and the chain it ran under. */
const readRefused = (callPath: string, chainPath: Option.Option<string>) =>
  Effect.gen(function*() {
    const { value } = yield* readObjectFile(callPath, "a call")
    if (typeof value.op !== "string" || !isObject(value.args)) {
      return yield* Effect.fail(cliError("malformed", "the call has a string op and an object args", callPath))
    }
    const action: Action = { op: value.op, args: value.args }
    if (Option.isSome(chainPath)) return { action, chain: yield* readChainFile(chainPath.value) }
    if (!Array.isArray(value.chain)) return yield* Effect.fail(cliError("mandate/usage", "the call carries no chain: give --chain", callPath))
    return { action, chain: value.chain as ReadonlyArray<Json> }
  })

const fromApproval = (e: ApprovalError) => Effect.fail(cliError(e.reason, e.message, e.path))

export const writApproverCommand = Command.make("approver", { call: callOption, chain: chainOption }, (o) =>
  runCommand(Effect.gen(function*() {
    const { action, chain } = yield* readRefused(o.call, o.chain)
    const point = yield* Effect.catchTag(approvalPoint(chain, action), "ApprovalError", fromApproval)
    const w = point.chain[point.index]
    yield* Console.log(point.approver)
    yield* Console.log(`  refuses: writ ${point.index} of ${point.chain.length} (${w.id}), held by ${w.value.hld}`)
    yield* Console.log(`  approve: mandate writ approve --key <approver key> --call ${o.call}${Option.isSome(o.chain) ? ` --chain ${o.chain.value}` : ""} --out approval.json`)
  }))
)

export const writApproveCommand = Command.make(
  "approve",
  {
    key: Options.file("key").pipe(Options.withDescription("Your key file: the approver, or a holder below re-issuing its writ")),
    call: callOption,
    chain: chainOption,
    above: Options.file("above").pipe(Options.optional, Options.withDescription("The new chain so far (what the previous `approve` wrote); absent: start at the approval point")),
    exp: Options.text("exp").pipe(Options.optional, Options.withDescription("Expiry, Unix seconds (default and at most: the writ above's)")),
    out: Options.file("out").pipe(Options.withDescription("Where to write the new chain so far")),
    force: forceOption
  },
  (o) =>
    runCommand(Effect.gen(function*() {
      const { action, chain } = yield* readRefused(o.call, o.chain)
      const keys = yield* keyLayer(o.key)
      let above: ReadonlyArray<Json>
      if (Option.isSome(o.above)) above = yield* readChainFile(o.above.value)
      else {
        const point = yield* Effect.catchTag(approvalPoint(chain, action), "ApprovalError", fromApproval)
        above = chain.slice(0, point.index)
      }
      const at = above.length
      if (at >= chain.length) return yield* Effect.fail(cliError("mandate/usage", "the new chain is already complete: make the call again under it"))
      const exp = Option.isSome(o.exp) ? yield* seconds("exp", o.exp.value) : undefined
      const issued = yield* approveAt({ above, replaced: chain[at], action, ...(exp === undefined ? {} : { exp }) }).pipe(
        Effect.provide(keys),
        Effect.catchTag("ApprovalError", fromApproval)
      )
      yield* writeJson(o.out, issued.chainJson, o.force)
      yield* Console.log(`writ ${issued.id} in place of writ ${at} of ${chain.length}`)
      yield* Console.log(`  iss ${issued.writ.iss}`)
      yield* Console.log(`  hld ${issued.writ.hld}`)
      yield* Console.log(`  exp ${issued.writ.exp}`)
      yield* Console.log(`written to ${o.out}`)
      if (issued.chain.length < chain.length) {
        const next = chain[issued.chain.length] as JsonObject
        yield* Console.log(`next: ${String(next.iss)} re-issues writ ${issued.chain.length}: mandate writ approve --key <its key> --call ${o.call} --above ${o.out} --out <file>`)
      } else {
        yield* Console.log(`complete: make the call again under ${o.out}`)
      }
    }))
)
