// The proxy's answer to a bound request the server has answered (proxy.ts; docs/bindings.md,
// "What a verified result authenticates"): passed on only when its tally verifies against the
// call sent, rebuilt from what the tally authenticates, and kept as a receipt. A tool's result by
// client.ts `verified`; a resource's or prompt's by bound.ts `checkBound` (a result for an `ok`
// tally, a JSON-RPC error carrying the tally otherwise). The tally is required of the server for
// every bound method: the count is consumed by the executor (spec 7.3), so an answer with no tally
// is one no executor counted, and the proxy, which keeps no count store, cannot count it instead.
//
// A verified answer whose rendering is over `maxResult` is not passed on (`result_too_large`) but
// its tally is kept as a receipt, since it ran and counted.
import { Effect } from "effect"
import type { Json, JsonObject } from "../../kernel/json.js"
import { verifyCall } from "../../writ/call.js"
import { checkBound, presentBound, refusalData } from "./bound.js"
import { verified, verifyAnswer } from "./client.js"
import { resultTooLarge } from "./reason.js"
import { receipt, Receipts } from "./receipts.js"
import { errorAnswer, type Message, REFUSED, type RequestId } from "./rpc.js"

/** A bound request the proxy signed and sent. */
export interface SentBound {
  readonly method: string
  /** The tool or prompt, or the URI read. */
  readonly name: string
  readonly call: Json
  readonly callId: string
}

/** The receipt's `tool` member: the tool's name, or the method and what it named. */
export const receiptName = (b: SentBound): string => (b.method === "tools/call" ? b.name : `${b.method} ${b.name}`)

/** The verified answer to `clientId`, as the client gets it (through `toClient`). */
export const answerBound = (
  b: SentBound,
  clientId: RequestId,
  m: Message,
  maxResult: number,
  toClient: (m: Message) => Effect.Effect<void>
): Effect.Effect<void, never, Receipts> => {
  const refuse = (e: { readonly reason: string; readonly message: string; readonly path?: string }) =>
    Effect.zipRight(
      Effect.logWarning(`${b.method} answer refused: ${e.reason}: ${e.message}`),
      toClient(errorAnswer(clientId, REFUSED, e.reason, e.message, e.path))
    )
  const keep = (tally: JsonObject, body: JsonObject | undefined, answer: Message) =>
    Effect.gen(function*() {
      const rs = yield* Receipts
      const size = JSON.stringify(answer).length
      if (size > maxResult) {
        // It ran and counted: the tally is kept (without the body), the body not passed on.
        const e = resultTooLarge(`the verified result is ${size} characters, over ${maxResult}; its tally is kept as a receipt`)
        yield* rs.keep(receipt(receiptName(b), b.callId, tally, undefined))
        return yield* toClient(errorAnswer(clientId, REFUSED, e.reason, e.message))
      }
      yield* rs.keep(receipt(receiptName(b), b.callId, tally, body))
      yield* toClient({ jsonrpc: "2.0", id: clientId, ...answer })
    })
  if (b.method === "tools/call") {
    // A JSON-RPC error claims nothing was done; it passes as it is.
    if (m.result === undefined) return toClient({ ...m, id: clientId })
    return verified(b.call, m.result).pipe(Effect.matchEffect({
      onFailure: refuse,
      onSuccess: (v) => keep(v.checked.tally.json, v.checked.body, { result: v.result })
    }))
  }
  return Effect.flatMap(verifyCall(b.call), (sent) => checkBound(b.method, m, (t) => verifyAnswer(sent, t))).pipe(Effect.matchEffect({
    onFailure: refuse,
    onSuccess: (v) => {
      if (v === undefined) return toClient({ ...m, id: clientId })
      if (v.ok && v.body !== undefined) return keep(v.tally.json, v.body, { result: presentBound(v.tally.json, v.body) })
      const data = refusalData(v.tally.json, v.body)
      return keep(v.tally.json, v.body, { error: { code: REFUSED, message: `${String(data.reason)}: the tally of this ${b.method} is ${v.tally.value.st}`, data } })
    }
  }))
}
