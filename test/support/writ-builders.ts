// Builders of Writ v0.1 objects for tests and for the corpus generator (scripts/conformance.ts):
// values (including the malformed shapes plain JSON cannot carry), deterministic keys and nonces,
// signatures over a signing input assembled here from the spec (section 1.4) and this file's own
// RFC 8785 serializer (section 1.2), and one builder per object type (sections 2, 5, 6, 9.1, 9.4).
//
// Independence: nothing in src/writ is imported, so a test built on these objects (and the corpus
// generated from them) can catch a verifier bug instead of repeating it. Keys and nonces come from
// the kernel's deterministic randomness stream, one stream per label; Ed25519 signatures are
// deterministic (RFC 8032), so every object is the same on every run.
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js"
import { RandomBytes, Signer, type SignerShape } from "../../src/kernel/services.js"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"

// ---------------------------------------------------------------------------------------------
// Values, including the two shapes plain JSON objects cannot carry.

/** JSON text written verbatim into the vector file (e.g. `1.5`, a deep array). */
export class Raw {
  constructor(readonly text: string) {}
}
/** An object with an explicit member order; may repeat a member name (section 1.1 rule 4 cases). */
export class Ordered {
  constructor(readonly entries: ReadonlyArray<readonly [string, V]>) {}
}
export type V = null | boolean | number | string | Raw | Ordered | ReadonlyArray<V> | { readonly [k: string]: V }
export type Obj = { readonly [k: string]: V }

const isPlainObject = (v: V): v is Obj =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Raw) && !(v instanceof Ordered)

/** Section 1.2 on the values this file builds: RFC 8785 with integers only, names by UTF-16 code
 * units (JavaScript's default string order), strings as ES2019 JSON.stringify writes them. */
export const canon = (v: V): string => {
  if (v === null) return "null"
  if (typeof v === "boolean") return v ? "true" : "false"
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new RangeError(`canon: ${v} is not a safe integer`)
    return Object.is(v, -0) ? "0" : String(v)
  }
  if (typeof v === "string") return JSON.stringify(v)
  if (v instanceof Raw || v instanceof Ordered) throw new TypeError("canon: a malformed value has no canonical form")
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`
  const o = v as Obj
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canon(o[k])}`).join(",")}}`
}

/** The vector file layout: members sorted, one-space indentation. */
export const pretty = (v: V, indent = ""): string => {
  const inner = indent + " "
  if (v instanceof Raw) return v.text
  if (v === null || typeof v !== "object") return canon(v)
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]"
    return `[\n${v.map((x) => inner + pretty(x, inner)).join(",\n")}\n${indent}]`
  }
  const entries: ReadonlyArray<readonly [string, V]> =
    v instanceof Ordered ? v.entries : Object.keys(v as Obj).sort().map((k) => [k, (v as Obj)[k]] as const)
  if (entries.length === 0) return "{}"
  return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pretty(x, inner)}`).join(",\n")}\n${indent}}`
}

export const b64u = (b: Uint8Array): string => Buffer.from(b).toString("base64url")
const sha256 = (b: Uint8Array | string): Uint8Array => new Uint8Array(createHash("sha256").update(b).digest())
/** Section 1 "Hash" and section 1.5 identity: base64url SHA-256 of the canonical bytes. */
export const hashOf = (v: V): string => b64u(sha256(Buffer.from(canon(v), "utf8")))

// ---------------------------------------------------------------------------------------------
// Keys, nonces, signatures.

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s)
const stream = (label: string, n: number): Uint8Array =>
  Effect.runSync(RandomBytes.deterministic(utf8(`mandate/writ-corpus/${label}`)).bytes(n))

export interface Key {
  readonly name: string
  readonly seed: Uint8Array
  readonly pub: Uint8Array
  readonly did: string
  readonly signer: SignerShape
}
const keyCache = new Map<string, Key>()
/** The principal named `name`: a 32-byte seed from its own deterministic stream. */
export const key = (name: string): Key => {
  const hit = keyCache.get(name)
  if (hit) return hit
  const seed = stream(`key/${name}`, 32)
  const signer = Signer.make(seed)
  const k = { name, seed, pub: signer.publicKey, did: didKeyFromPublicKey(signer.publicKey), signer }
  keyCache.set(name, k)
  return k
}
/** 16 bytes (section 1.6 minimum) from the stream of `label`, base64url: 22 characters. */
export const nonce = (label: string, bytes = 16): string => b64u(stream(`nnc/${label}`, bytes))

/** Section 1.4 signing input: `<typ>/1` NUL canonical form without `sig`. */
export const signingInput = (typ: string, o: Obj): Uint8Array => {
  const { sig: _s, ...rest } = o
  return Buffer.concat([Buffer.from(`${typ}/1`, "utf8"), Buffer.from([0]), Buffer.from(canon(rest), "utf8")])
}
/** Signs `o` as `typ` (default: its own `typ`) with `k`, replacing any `sig`. */
export const sign = (k: Key, o: Obj, typ: string = String(o.typ)): Obj => {
  const { sig: _s, ...rest } = o
  return { ...rest, sig: b64u(Effect.runSync(k.signer.sign(signingInput(typ, rest)))) }
}

// The 14 encodings of points of small order (2026-10-04 rule): the 8 torsion points in canonical
// form; the sign-bit-set forms of the two with x = 0 (identity, order 2); and y = p (y = 0, order 4)
// and y = p + 1 (y = 1, identity), non-canonical, each with either sign bit.
export const SMALL_ORDER: ReadonlyArray<readonly [string, string]> = [
  ["identity", "0100000000000000000000000000000000000000000000000000000000000000"],
  ["identity_sign_bit_set", "0100000000000000000000000000000000000000000000000000000000000080"],
  ["identity_y_p_plus_1", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"],
  ["identity_y_p_plus_1_sign_bit_set", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"],
  ["order_2", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"],
  ["order_2_sign_bit_set", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"],
  ["order_4_y_0", "0000000000000000000000000000000000000000000000000000000000000000"],
  ["order_4_y_0_sign_bit_set", "0000000000000000000000000000000000000000000000000000000000000080"],
  ["order_4_y_p", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"],
  ["order_4_y_p_sign_bit_set", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"],
  ["order_8_first", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"],
  ["order_8_first_sign_bit_set", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"],
  ["order_8_second", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"],
  ["order_8_second_sign_bit_set", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"]
]
// Cross-check against an independent list: every torsion point @noble/curves knows is above.
for (const h of ED25519_TORSION_SUBGROUP) {
  if (!SMALL_ORDER.some(([, x]) => x === h)) throw new Error(`torsion point ${h} missing from SMALL_ORDER`)
}
// Ed25519 arithmetic for signatures with a chosen R (RFC 8032 section 5.1.6 with r fixed).
const L = 2n ** 252n + 27742317777372353535851937790883648493n
const leToBig = (b: Uint8Array): bigint => {
  let x = 0n
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i])
  return x
}
const bigToLe32 = (x: bigint): Uint8Array => {
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) {
    out[i] = Number(x & 0xffn)
    x >>= 8n
  }
  return out
}
/** A signature (R, S) with R the given 32 bytes and S = k·a mod L, k = SHA-512(R || A || M): for
 * R the identity this is exactly the signature made with nonce r = 0; for every small-order R it
 * satisfies the cofactored verification equation, so only the small-order rule refuses it. */
export const signWithR = (k: Key, typ: string, o: Obj, rHex: string): Obj => {
  const { sig: _s, ...rest } = o
  const h = new Uint8Array(createHash("sha512").update(k.seed).digest())
  const a = h.slice(0, 32)
  a[0] &= 248
  a[31] &= 127
  a[31] |= 64
  const R = new Uint8Array(Buffer.from(rHex, "hex"))
  const kk = leToBig(new Uint8Array(createHash("sha512").update(R).update(k.pub).update(signingInput(typ, rest)).digest())) % L
  const S = (kk * leToBig(a)) % L
  return { ...rest, sig: b64u(Buffer.concat([R, bigToLe32(S)])) }
}

// ---------------------------------------------------------------------------------------------
// Objects (sections 2, 5, 6, 9.1, 9.4).

/** Fixed times: T0 = 2027-01-15T08:00:00Z. */
export const T0 = 1800000000
export const DAY = 86400

/** The bounds a writ has unless given others. */
export const BASE_BND: Obj = {
  act: { t: "prefix", v: "shop" },
  amount: { t: "max", v: 50000 },
  currency: { t: "set", v: ["EUR", "GBP"] },
  uses: { t: "count", v: 5 },
  date: { t: "window", v: [20270101, 20270131] },
  spend: { t: "total", v: 200000 }
}

export interface WritP {
  readonly iss: Key
  readonly hld: string
  readonly bnd?: Obj
  readonly prv?: string | null
  readonly exp?: number
  readonly extra?: Obj
  readonly nnc?: string
}
/** A writ signed by `p.iss`; `label` picks its nonce. */
export const writ = (label: string, p: WritP): Obj =>
  sign(p.iss, {
    v: 1, typ: "writ", iss: p.iss.did, hld: p.hld, bnd: p.bnd ?? BASE_BND, prv: p.prv ?? null,
    exp: p.exp ?? T0 + DAY, nnc: p.nnc ?? nonce(`writ/${label}`), ...(p.extra ?? {})
  })
/** A child of `parent` issued by `iss` (the parent's holder) to `hld`, bounds overridden by `bnd`. */
export const child = (label: string, parent: Obj, iss: Key, hld: string, bnd: Obj = {}, p: Partial<WritP> = {}): Obj =>
  writ(label, {
    iss, hld, bnd: { ...(parent.bnd as Obj), ...bnd }, prv: hashOf(parent), exp: (parent.exp as number) - 600, ...p
  })
export const call = (label: string, from: Key, chain: ReadonlyArray<V>, op: string, args: V, extra: Obj = {}): Obj =>
  sign(from, { v: 1, typ: "call", id: nonce(`call/${label}`), chain: chain as V, from: from.did, op, args, ...extra })

export interface TallyP {
  readonly call: string
  readonly writ: string
  readonly op: string
  readonly acc: number
  readonly st?: string
  readonly err?: V
  readonly out?: string | null
  readonly used?: Obj
  readonly rev?: V
  readonly sub?: ReadonlyArray<V>
  readonly wrt?: ReadonlyArray<V>
  readonly extra?: Obj
}
export const tally = (signer: Key, p: TallyP): Obj =>
  sign(signer, {
    v: 1, typ: "tally", call: p.call, writ: p.writ, op: p.op, acc: p.acc, st: p.st ?? "ok",
    err: p.err === undefined ? null : p.err, out: p.out === undefined ? null : p.out, used: p.used ?? {},
    rev: p.rev === undefined ? null : p.rev, sub: (p.sub ?? []) as V, wrt: (p.wrt ?? []) as V, ...(p.extra ?? {})
  })
export const revoke = (iss: Key, writ: string, chain: ReadonlyArray<V>, extra: Obj = {}): Obj =>
  sign(iss, { v: 1, typ: "revoke", writ, iss: iss.did, chain: chain as V, ...extra })
export const ack = (iss: Key, revokeId: string, rcv: number, body: V, extra: Obj = {}): Obj =>
  sign(iss, { v: 1, typ: "ack", revoke: revokeId, iss: iss.did, rcv, out: hashOf(body), ...extra })
