// The file layout of the approval store (SPEC-approval §8 `FileStore`; approval.json `fileStore`),
// as pure functions of the key: the conformance runner (conformance.ts) checks these paths and
// contents against the vectors. No store Layer writes files yet: the local stdio server and the
// `yea approve` command share the SQLite store (src/store/sqlite/approval.ts) instead. Every path is built from hashes or from
// ids checked against their format, so no key can name a file outside the store.
import { utf8 } from "../../kernel/canonical.js"
import { hashB64 } from "../../kernel/hash.js"

const B64 = /^[A-Za-z0-9_-]{1,128}$/
const MEASURE = /^[a-z][a-z0-9_.-]{0,63}$/

const safe = (re: RegExp, s: string, what: string): string => {
  if (!re.test(s)) throw new RangeError(`${what} is not a safe path part`)
  return s
}

/** A consumed one-time marker: keyed by the nonce's hash (the nonce itself never names a file). */
export const consumedFile = (nonce: string): string => `consumed/${hashB64(utf8(nonce))}`
export const consumedContent = (expiresAt: number): string => String(expiresAt)

export const consentFile = (planHash: string): string => `consents/${safe(B64, planHash, "plan hash")}`

export const receiptFile = (id: string): string => `receipts/${safe(/^r_[A-Za-z0-9_-]{12}$/, id, "receipt id")}.json`

export const undoClaimFile = (id: string): string => `undo/${safe(/^r_[A-Za-z0-9_-]{12}$/, id, "receipt id")}.claim`
export const UNDO_CLAIM_CONTENT = "*"
export const undoDoneFile = (id: string): string => `undo/${safe(/^r_[A-Za-z0-9_-]{12}$/, id, "receipt id")}.done`
export const UNDO_DONE_CONTENT = ""

/** One ledger key's file: what is settled and what each open reservation holds, in ledger units. */
export const ledgerFile = (block: string, of: string): string => `ledger/${safe(B64, block, "block id")}/${safe(MEASURE, of, "measure")}.json`

export interface LedgerEntry {
  readonly settled: bigint
  readonly reserved: Readonly<Record<string, bigint>>
}

export const ledgerContent = (e: LedgerEntry): string =>
  JSON.stringify({ settled: e.settled.toString(), reserved: Object.fromEntries(Object.entries(e.reserved).map(([k, v]) => [k, v.toString()])) })

/** Reads a ledger file; anything malformed is `undefined` (the store then fails closed). */
export const readLedger = (text: string): LedgerEntry | undefined => {
  try {
    const o = JSON.parse(text) as { settled?: unknown; reserved?: unknown }
    if (typeof o.settled !== "string" || !/^\d+$/.test(o.settled) || typeof o.reserved !== "object" || o.reserved === null) return undefined
    const reserved: Record<string, bigint> = {}
    for (const [k, v] of Object.entries(o.reserved)) {
      if (typeof v !== "string" || !/^\d+$/.test(v)) return undefined
      reserved[k] = BigInt(v)
    }
    return { settled: BigInt(o.settled), reserved }
  } catch {
    return undefined
  }
}
