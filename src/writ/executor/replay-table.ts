// The table behind fast replays (replays.ts): the final answer of every call this executor fully
// verified and answered with a final tally, keyed by the SHA-256 of the exact bytes it arrived as.
// Identical bytes are the identical call and chain, so steps 1 to 3, 6 and the rest of 8 hold for
// them without being run again; only what can change for the same bytes is checked again
// (live-checks.ts). A final entry in the call store never changes (section 7 step 9), so neither
// does a remembered answer.
//
// Bounded in bytes (an estimate: the received bytes and the answer, a few times over for the
// values decoded from them), least recently used first out. Keys are digests: copies, never
// slices of a body.
import { createHash } from "node:crypto"
import type { CheckedCall } from "../call.js"
import type { ObjectInput } from "../verify.js"
import { Received } from "../verify.js"
import type { CheckedWrit } from "../writ.js"
import type { CallAnswer } from "./answers.js"

export const DEFAULT_REPLAY_TABLE_BYTES = 16 * 1024 * 1024
/** Section 1.6: no call is larger; longer bytes are never looked up (nor hashed). */
const MAX_CALL_BYTES = 65536

export interface ReplayEntry {
  readonly checked: CheckedCall
  readonly chain: ReadonlyArray<CheckedWrit>
  readonly answer: Extract<CallAnswer, { readonly _tag: "tally" }>
  /** The identity of the answer's tally, for its audit row (hashed once, not per replay). */
  readonly signed: string
  readonly bytes: number
  /**
   * The executor's revocation count (ExecutorState.revocations) when the entry's chain was last
   * found not revoked in the store (replays.ts), or -1: the plain replay path answers only while
   * no revoke has been recorded since.
   */
  clearAt: number
  /**
   * The store's revocation mark (AdmissionGateService.revocationMark: revokes recorded by any
   * process sharing the store) read just before that same store read, when the gate has one.
   */
  clearMark?: number | undefined
}

export interface ReplayTable {
  readonly get: (key: string) => ReplayEntry | undefined
  readonly set: (key: string, entry: ReplayEntry) => void
  readonly size: () => number
}

export const replayTable = (maxBytes: number): ReplayTable => {
  const entries = new Map<string, ReplayEntry>()
  let held = 0
  return {
    get: (key) => entries.get(key),
    set: (key, entry) => {
      if (entry.bytes > maxBytes) return
      const old = entries.get(key)
      if (old !== undefined) {
        entries.delete(key)
        held -= old.bytes
      }
      entries.set(key, entry)
      held += entry.bytes
      for (const [k, e] of entries) {
        if (held <= maxBytes) break
        entries.delete(k)
        held -= e.bytes
      }
    },
    size: () => entries.size
  }
}

/**
 * The key of received bytes, or null when there are none to key (a value handed over in process)
 * or more than a call may hold. Text is hashed as its UTF-16 code units, losslessly, and apart
 * from bytes: two inputs share a key only when they are the same input.
 */
export const replayKeyOf = (input: ObjectInput): string | null => {
  if (!(input instanceof Received)) return null
  const known = keys.get(input)
  if (known !== undefined) return known
  const b = input.bytes
  const key = typeof b === "string"
    ? b.length > MAX_CALL_BYTES ? null : `t${createHash("sha256").update(b, "utf16le").digest("base64")}`
    : b.byteLength > MAX_CALL_BYTES ? null : `b${createHash("sha256").update(b).digest("base64")}`
  keys.set(input, key)
  return key
}

/** Keys already computed, by input: a transport's replay path and then `call` hash the bytes once. */
const keys = new WeakMap<Received, string | null>()

/** The estimate of what an entry holds, in bytes: the call's canonical text and the values read
 * from it, and the answer. */
export const entryBytes = (checked: CheckedCall, answer: ReplayEntry["answer"]): number =>
  4 * checked.canonical.length + 2 * JSON.stringify(answer.tally).length +
  (answer.res._tag === "Some" ? 2 * JSON.stringify(answer.res.value).length : 0) + 512
