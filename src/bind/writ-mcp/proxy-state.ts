// What the proxy (./proxy.ts) keeps per request: each request it sent the server, under the id it
// allocated (the client's, or its own re-listing and initialize), the bound requests waiting to be
// signed in order, and a drop of the server's transport, queued in order with its messages.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { Deferred } from "effect"
import { isJsonObject, type JsonObject } from "../../kernel/json.js"
import type { SentBound } from "./proxy-answer.js"
import type { Message, RequestId, RpcError } from "./rpc.js"

export type Pending =
  | {
    readonly tag: "client"
    readonly clientId: RequestId
    readonly method: string
    readonly cursor: boolean
    readonly bound?: SentBound
    /** A listing filtered to what the grant admits. */
    readonly listing?: string
    /** The client's progress token for this request, if it gave one. */
    readonly progressToken?: string | number
    canceled: boolean
  }
  | { readonly tag: "own"; readonly answer: Deferred.Deferred<Message, RpcError> }

export interface BoundCall {
  readonly id: RequestId
  readonly method: string
  readonly params: JsonObject
}

/** A drop the server's transport reported (./proxy-upstream.ts), read in order with its messages. */
export class Dropped {
  constructor(readonly transport: Transport, readonly why: string) {}
}

export const paramsOf = (m: Message): JsonObject => (isJsonObject(m.params) ? m.params : {})
