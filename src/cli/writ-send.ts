// `mandate writ send URL FILE`: POST a call or a revoke to an executor (spec section 10) and verify
// the answer. A call's answer is an unsigned error (section 7 steps 1 and 2) or a tally whose tree
// is checked by section 6.2 against the call sent; a revoke's answer carries the executor's ack,
// relayed acks in `fwd` (each checked by section 9.4 steps 2 to 4) and the tallies of the calls it
// held open. Prints the verdict; `--out` keeps the answer. Exit status 0 when the answer verifies
// (a signed refusal verifies: it is evidence), 1 otherwise.
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { Json } from "../kernel/json.js"
import { checkCallAnswer, checkRevokeAnswer, locateNoncanonical, refusalCodes, shortKey } from "./writ-check.js"
import { cliError, describeFailure, exitRefused, forceOption, httpUrl, isObject, readObjectFile, runCommand, writeJson } from "./writ-io.js"
import { fetchWellKnown, type PostAnswer, postWrit } from "../bind/writ-http/client.js"

const url = Args.text({ name: "URL" }).pipe(Args.withDescription("The executor's endpoint"))
const file = Args.text({ name: "FILE" }).pipe(Args.withDescription("A signed call or revoke"))
const options = {
  out: Options.file("out").pipe(Options.optional, Options.withDescription("Where to write the answer")),
  force: forceOption,
  executor: Options.text("executor").pipe(Options.optional, Options.withDescription("The receiver's did:key, to check a wrong_executor refusal it signed"))
}

/** The answer's value, read with section 1.1; when it breaks the rules, `noncanonical` at the
 * object within the answer that holds the fault (an embedded ack, tally or `res` body), or at the
 * URL when the answer as a whole is not JSON or the fault is in its own members. */
export const strictAnswer = (url: string, posted: PostAnswer) =>
  Option.match(posted.json, {
    onSome: Effect.succeed,
    onNone: () => {
      const where = locateNoncanonical(posted.bytes)
      return where === undefined || where.path === ""
        ? Effect.fail(cliError("noncanonical", `the answer (status ${posted.status}) is not strict JSON (section 1.1)${where ? `: ${where.message}` : ""}`, url))
        : Effect.fail(cliError("noncanonical", `in the answer from ${url} (status ${posted.status}), not strict JSON (section 1.1): ${where.message}`, where.path))
    }
  })

export const writSendCommand = Command.make("send", { url, file, ...options }, (o) =>
  runCommand(Effect.gen(function*() {
    const endpoint = yield* httpUrl(o.url)
    const { bytes, value } = yield* readObjectFile(o.file, "a call or a revoke")
    if (value.typ !== "call" && value.typ !== "revoke") return yield* Effect.fail(cliError("wrong_type", "send takes a call or a revoke", o.file))
    const posted = yield* Effect.mapError(postWrit(o.url, bytes), (e) => cliError("mandate/unreachable", e.message, o.url))
    const answer: { status: number; body: Json } = { status: posted.status, body: yield* strictAnswer(o.url, posted) }
    if (Option.isSome(o.out)) yield* writeJson(o.out.value, answer.body, o.force)
    yield* Console.log(`status ${answer.status}`)
    if (value.typ === "call") {
      // A `wrong_executor` refusal is signed by the receiver, not the leaf holder (section 6.1):
      // its key is --executor, or else what the receiver's well-known document (Appendix B) says.
      let receiver = Option.getOrUndefined(o.executor)
      const t = isObject(answer.body) && isObject(answer.body.tally) ? answer.body.tally : undefined
      if (receiver === undefined && t !== undefined && isObject(t.err) && t.err.code === "wrong_executor") {
        const doc = yield* Effect.either(fetchWellKnown(endpoint.origin))
        if (doc._tag === "Right" && isObject(doc.right) && typeof doc.right.did === "string") {
          receiver = doc.right.did
          yield* Console.log(`receiver's key from its well-known document: ${receiver}`)
        }
      }
      const v = yield* checkCallAnswer(value, answer.body, receiver)
      switch (v._tag) {
        case "error":
          yield* Console.log(`refused, unsigned (section 7 steps 1-2): ${v.reason}`)
          return yield* exitRefused
        case "malformed":
          yield* Console.log(`answer malformed: ${v.message}`)
          return yield* exitRefused
        case "tally":
          yield* Console.log(`tally ${v.st}${v.code ? ` (${v.code})` : ""}${v.st === "failed" ? ", a signed refusal" : ""}`)
          yield* Console.log(`verdict: ${v.verdict}${v.error ? `: ${describeFailure(v.error)}` : ""}${v.st === "failed" && v.code !== null && refusalCodes.has(v.code) && v.verdict === "valid" ? " (refusal checked as section 6.1 under the receiver, naming this call)" : ""}`)
          if (v.verdict !== "valid") yield* exitRefused
      }
    } else {
      const v = yield* checkRevokeAnswer(value, answer.body)
      if (v.error !== undefined) {
        yield* Console.log(`revoke refused: ${v.error}`)
        return yield* exitRefused
      }
      const ok = v.own!.ok && v.fwd.every((f) => f.ok) && v.tallies.every((t) => t.ok)
      yield* Console.log(`ack from ${shortKey(v.own!.iss)}: ${v.own!.ok ? "valid" : describeFailure(v.own!.error!)}`)
      for (const f of v.fwd) yield* Console.log(`relayed ack from ${shortKey(f.iss)}: ${f.ok ? "valid" : describeFailure(f.error!)}`)
      for (const t of v.tallies) {
        yield* Console.log(`open call ${String(t.tally.call)}: st ${String(t.tally.st)} ${t.ok ? "signature ok" : describeFailure(t.error!)}`)
      }
      yield* Console.log(`verdict: ${ok ? "valid" : "invalid"}`)
      if (!ok) yield* exitRefused
    }
  }))
)
