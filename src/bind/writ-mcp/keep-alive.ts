// Forms (MCP basic/utilities/progress): while the server waits on the client for an elicitation
// or sampling answer (a person may be typing), every open call whose client gave a progress token
// gets a progress notification each `keepAlive`, so a client that restarts its time limit on
// progress keeps the call. Its value follows the last one seen under that token, so it increases.
import { Effect } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import { idKey, type Message, type RequestId } from "./rpc.js"

/** The server's requests a person may take a while to answer. */
export const FORM_METHODS: ReadonlySet<string> = new Set(["elicitation/create", "sampling/createMessage"])
/** The message of the proxy's own progress while a form is open. */
export const FORM_WAITING = "waiting for an answer from the client (a form or sampling)"

/** The progress token a request's `_meta` gives, if any. */
export const progressTokenOf = (params: JsonObject): string | number | undefined => {
  const meta = params._meta
  return isJsonObject(meta) && (typeof meta.progressToken === "string" || typeof meta.progressToken === "number") ? meta.progressToken : undefined
}

export class FormKeepAlive {
  /** The server's form requests the client has not answered. */
  private readonly forms = new Set<string>()
  /** The last progress value the client was sent under each token. */
  private readonly last = new Map<string, number>()

  /** A request of the server's on its way to the client. */
  opened(id: RequestId, method: string): void {
    if (FORM_METHODS.has(method)) this.forms.add(idKey(id))
  }

  /** The client answered the server's request `id`. */
  answered(id: RequestId): void {
    this.forms.delete(idKey(id))
  }

  clear(): void {
    this.forms.clear()
  }

  /** A progress notification of the server's on its way to the client. */
  saw(params: JsonObject): void {
    if (typeof params.progress === "number" && (typeof params.progressToken === "string" || typeof params.progressToken === "number")) {
      this.last.set(idKey(params.progressToken), params.progress)
    }
  }

  /** One tick: progress for each of `tokens` (the open calls') while a form is open. */
  tick(tokens: ReadonlyArray<string | number>, send: (m: Message) => Effect.Effect<void>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.forms.size === 0) return Effect.void
      return Effect.forEach(tokens, (token) => {
        const progress = (this.last.get(idKey(token)) ?? 0) + 1
        this.last.set(idKey(token), progress)
        return send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress, message: FORM_WAITING } })
      }, { discard: true })
    })
  }
}
