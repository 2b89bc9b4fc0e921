// Shared by the kill test and its child process: the same keys and writs on both sides.
import { encodeBase64url } from "../../src/kernel/base64url.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { identity } from "../../src/writ/sign.js"
import { act, EXP, key } from "./fixtures.js"

export const A = key(11)
export const B = key(12)
export const E = key(13)

const nnc = (n: number) => encodeBase64url(new Uint8Array(16).fill(n))

export const bounds: JsonObject = {
  act: act("pay"),
  uses: { t: "count", v: 1_000_000 },
  amount: { t: "total", v: 1_000_000_000 }
}
export const w1 = A.sign("writ", { v: 1, typ: "writ", iss: A.did, hld: B.did, bnd: bounds, prv: null, exp: EXP, nnc: nnc(1) })
export const w2 = B.sign("writ", { v: 1, typ: "writ", iss: B.did, hld: E.did, bnd: bounds, prv: identity(w1), exp: EXP, nnc: nnc(2) })
export const AMOUNT = 7

/** A writ per run that the child revokes, so the parent can check revokes survive the kill. */
export const revocable = (run: number) =>
  B.sign("writ", { v: 1, typ: "writ", iss: B.did, hld: E.did, bnd: bounds, prv: identity(w1), exp: EXP, nnc: nnc(100 + (run % 100)) })
