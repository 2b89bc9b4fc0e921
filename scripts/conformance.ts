// `npm run conformance:gen [DIR]`: regenerates the project's own Writ v0.1 conformance corpus in
// `conformance/vectors/`, one file per vector in the section 14 format, byte for byte the same on
// every run.
//
// Independence. Objects are built here from the spec's member tables and signed with the kernel's
// `Signer` (node:crypto Ed25519) over a signing input this file assembles itself (section 1.4) from
// its own RFC 8785 serializer (section 1.2). Nothing in src/writ is imported: every expected verdict
// and reason below is what the spec's rules give for the case as constructed ("the child widens the
// set, so section 4 step 4 fails: not_narrowed"), never a recording of what the verifier said, so the
// corpus can catch a verifier bug.
//
// Determinism. Key seeds and nonces come from the kernel's `RandomBytes.deterministic` stream, one stream
// per label (so adding a vector never changes another's bytes); times are fixed constants; Ed25519
// signatures are deterministic (RFC 8032). Vector files are pretty-printed with members sorted by
// UTF-16 code units, one-space indentation and a trailing newline; a malformed object that plain
// JSON cannot express (a duplicate member, a fraction) is written verbatim into the file.
//
// Names. `<op>.<slug>.json`: stable, independent of the order vectors are added in.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { ed25519 } from "@noble/curves/ed25519.js"
import { didKeyFromPublicKey } from "../src/kernel/didkey.js"
import {
  ack, b64u, BASE_BND, call, canon, child, DAY, hashOf, key, type Key, nonce, type Obj, Ordered, pretty, Raw, revoke,
  sign, signWithR, SMALL_ORDER, T0, tally, type TallyP, type V, writ, type WritP
} from "../test/support/writ-builders.js"

// The builders (values, keys, signatures, one per object type) live in test/support/writ-builders.ts,
// shared with the tests; what only the generator needs is below.
/** 32 bytes that are not the encoding of any curve point (y whose x^2 has no square root). */
const offCurve = (): Uint8Array => {
  for (let y = 2; ; y++) {
    const b = new Uint8Array(32)
    b[0] = y
    try {
      ed25519.Point.fromBytes(b)
    } catch {
      return b
    }
  }
}
const smallOrderDid = (hex: string): string => didKeyFromPublicKey(new Uint8Array(Buffer.from(hex, "hex")))

const A = key("alice") // root issuer
const B = key("bob")
const C = key("carol")
const D = key("dave")
const X = key("mallory") // a stranger to every chain

/** Re-sign `o` (as its own `typ`) after changing members: the only defect is the intended one. */
const resign = (k: Key, o: Obj, change: Obj, typ?: string): Obj => sign(k, { ...o, ...change }, typ)
const without = (o: Obj, ...names: ReadonlyArray<string>): Obj =>
  Object.fromEntries(Object.entries(o).filter(([n]) => !names.includes(n)))

/** `depth` levels of arrays around a scalar: the outermost is level 1 (section 1.1 rule 7). */
const nestedArrays = (depth: number, scalar = "0"): Raw => new Raw("[".repeat(depth) + scalar + "]".repeat(depth))
/** The same as a value (signable): `depth` arrays around 0. */
const nestedValue = (depth: number): V => {
  let v: V = 0
  for (let i = 0; i < depth; i++) v = [v]
  return v
}
/** Replaces member `name` of object `o` by raw text (after signing: the file carries it verbatim). */
const withRaw = (o: Obj, name: string, text: string): Ordered =>
  new Ordered(Object.keys(o).sort().map((k) => [k, k === name ? new Raw(text) : o[k]] as const))
/** `o` with member `name` repeated (second value `dup`), members otherwise sorted. */
const withDuplicate = (o: Obj, name: string, dup: V): Ordered =>
  new Ordered(Object.keys(o).sort().flatMap((k) => (k === name ? [[k, o[k]] as const, [k, dup] as const] : [[k, o[k]] as const])))

// ---------------------------------------------------------------------------------------------
// Vectors.

export type Reason =
  | "too_large" | "noncanonical" | "unsupported_version" | "wrong_type" | "unsupported_critical" | "malformed"
  | "bad_key" | "bad_signature" | "chain_broken" | "not_narrowed" | "unknown_bound" | "expired" | "no_standing"
  | "forbidden_op" | "missing_arg" | "out_of_bounds" | "tally_mismatch" | "sub_unmatched" | "ack_mismatch" | "revoked"

export interface Vector {
  readonly file: string
  readonly name: string
  readonly op: string
  readonly input: Obj
  readonly expect: "accept" | "reject"
  readonly reason?: Reason
  readonly now?: number
}

const vectors: Array<Vector> = []
const slug = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "")
const add = (op: string, name: string, input: Obj, reason?: Reason, now?: number): void => {
  const file = `${op}.${slug(name)}.json`
  if (vectors.some((v) => v.file === file)) throw new Error(`duplicate vector file ${file}`)
  vectors.push({ file, name, op, input, expect: reason === undefined ? "accept" : "reject", ...(reason ? { reason } : {}), ...(now !== undefined ? { now } : {}) })
}
const ok = (op: string, name: string, input: Obj, now?: number) => add(op, name, input, undefined, now)
const no = (op: string, name: string, reason: Reason, input: Obj, now?: number) => add(op, name, input, reason, now)

// ---- canonicalize (sections 1.1 and 1.2) ---------------------------------------------------------
const canonicalize = (): void => {
  const acc = (name: string, raw: string, canonical: string) => ok("canonicalize", name, { raw, canonical })
  const rej = (name: string, reason: Reason, raw: string) => no("canonicalize", name, reason, { raw })
  acc("whitespace removed and members sorted", ' { "zeta" : 1 , "alpha" : [ 2 , 3 ] , "mid" : { "b" : true , "a" : null } } ', '{"alpha":[2,3],"mid":{"a":null,"b":true},"zeta":1}')
  // UTF-16 code units: U+FF61 (0xFF61) sorts after U+1F600 (surrogates 0xD83D...), the reverse of code point order.
  acc("member names by utf16 code units", '{"\uff61":1,"\ud83d\ude00":2,"a":3}', '{"a":3,"\ud83d\ude00":2,"\uff61":1}')
  acc("upper case sorts before lower case", '{"b":1,"B":2,"a":3,"A":4}', '{"A":4,"B":2,"a":3,"b":1}')
  acc("escapes per rfc 8785", '["\\u0041\\/\\b\\f\\n\\r\\t\\u0001\\u001f\\"\\\\\\u00e9\\ud83d\\ude00"]', '["A/\\b\\f\\n\\r\\t\\u0001\\u001f\\"\\\\\u00e9\ud83d\ude00"]')
  acc("minus zero reads as zero", '[-0,0]', '[0,0]')
  acc("largest safe integers", '[9007199254740991,-9007199254740991]', '[9007199254740991,-9007199254740991]')
  acc("literals and empty containers", '{"t":true,"f":false,"n":null,"o":{},"a":[]}', '{"a":[],"f":false,"n":null,"o":{},"t":true}')
  acc("nesting at the limit 64 arrays", nestedArrays(64).text, nestedArrays(64).text)
  acc("nesting at the limit 64 objects", '{"a":'.repeat(63) + '{}' + '}'.repeat(63), '{"a":'.repeat(63) + '{}' + '}'.repeat(63))
  acc("a scalar alone", '"x"', '"x"')
  rej("nesting 65 arrays", "too_large", nestedArrays(65).text)
  rej("nesting 65 objects", "too_large", '{"a":'.repeat(64) + '{}' + '}'.repeat(64))
  rej("nesting 65 before the fraction inside", "too_large", nestedArrays(65, "1.5").text)
  rej("nesting 65 before a duplicate member inside", "too_large", "[".repeat(64) + '{"a":1,"a":2}' + "]".repeat(64))
  rej("fraction at nesting 64 is noncanonical", "noncanonical", nestedArrays(64, "1.5").text)
  rej("duplicate member", "noncanonical", '{"k":1,"k":1}')
  rej("duplicate member deep inside", "noncanonical", '{"a":[{"b":{"c":1,"d":2,"c":3}}]}')
  rej("duplicate member spelled with an escape", "noncanonical", '{"a":1,"\\u0061":2}')
  rej("lone high surrogate escape", "noncanonical", '["\\ud800"]')
  rej("lone low surrogate escape", "noncanonical", '["\\udc00"]')
  rej("high surrogate followed by a non surrogate", "noncanonical", '["\\ud800\\u0041"]')
  rej("lone surrogate in a member name", "noncanonical", '{"\\udfff":1}')
  rej("fraction", "noncanonical", '[1.5]')
  rej("zero fraction", "noncanonical", '[2.0]')
  rej("exponent", "noncanonical", '[1e3]')
  rej("exponent with sign and capital", "noncanonical", '[1E+2]')
  rej("integer above 2^53 minus 1", "noncanonical", '[9007199254740992]')
  rej("integer below minus 2^53 plus 1", "noncanonical", '[-9007199254740992]')
  rej("trailing data", "noncanonical", '{"a":1} {"b":2}')
}

// ---- narrows and satisfies (section 3) -----------------------------------------------------------
const bounds = (): void => {
  const n = (name: string, child: V, parent: V, reason?: Reason) => add("narrows", name, { child, parent }, reason)
  const s = (name: string, bound: V, arg: V, reason?: Reason) => add("satisfies", name, { bound, arg }, reason)
  const b = (t: string, v: V): Obj => ({ t, v })
  // Narrowing rule of each type (section 3 table), accept.
  n("max smaller", b("max", 10), b("max", 11))
  n("max equal", b("max", 11), b("max", 11))
  n("max zero", b("max", 0), b("max", 0))
  n("count smaller", b("count", 1), b("count", 2))
  n("total smaller", b("total", 999), b("total", 1000))
  n("total equal", b("total", 1000), b("total", 1000))
  n("prefix equal", b("prefix", "shop"), b("prefix", "shop"))
  n("prefix one segment deeper", b("prefix", "shop/books"), b("prefix", "shop"))
  n("prefix slash form under its parent", b("prefix", "shop/books"), b("prefix", "shop/"))
  n("prefix slash form child of plain parent", b("prefix", "shop/"), b("prefix", "shop"))
  n("set subset", b("set", ["EUR"]), b("set", ["EUR", "GBP"]))
  n("set empty", b("set", []), b("set", ["EUR"]))
  n("set same elements other order", b("set", [2, "a"]), b("set", ["a", 2]))
  n("window inside", b("window", [5, 6]), b("window", [1, 9]))
  n("window equal", b("window", [1, 9]), b("window", [1, 9]))
  n("window single point", b("window", [9, 9]), b("window", [1, 9]))
  // Widening, not_narrowed.
  n("max larger", b("max", 12), b("max", 11), "not_narrowed")
  n("count larger", b("count", 3), b("count", 2), "not_narrowed")
  n("total larger", b("total", 1001), b("total", 1000), "not_narrowed")
  n("prefix shorter", b("prefix", "shop"), b("prefix", "shop/books"), "not_narrowed")
  n("prefix segment escape", b("prefix", "shopping"), b("prefix", "shop"), "not_narrowed")
  n("prefix slash form parent does not match its bare name", b("prefix", "shop"), b("prefix", "shop/"), "not_narrowed")
  n("prefix sibling", b("prefix", "shop/music"), b("prefix", "shop/books"), "not_narrowed")
  n("set adds an element", b("set", ["EUR", "USD"]), b("set", ["EUR", "GBP"]), "not_narrowed")
  n("set integer is not the string", b("set", [1]), b("set", ["1"]), "not_narrowed")
  n("window low escapes", b("window", [0, 5]), b("window", [1, 9]), "not_narrowed")
  n("window high escapes", b("window", [5, 10]), b("window", [1, 9]), "not_narrowed")
  n("type change max to total", b("total", 1), b("max", 5), "not_narrowed")
  n("type change total to count", b("count", 1), b("total", 5), "not_narrowed")
  n("type change count to max", b("max", 1), b("count", 5), "not_narrowed")
  n("type change set to prefix", b("prefix", "a"), b("set", ["a"]), "not_narrowed")
  n("type change before value comparison", b("max", 100), b("window", [1, 2]), "not_narrowed")
  // Section 3 on a bound: malformed, unknown_bound, noncanonical, in the stated order.
  n("bound not an object", 5 as V, b("max", 5), "malformed")
  n("extra member", { t: "max", v: 1, x: 0 }, b("max", 5), "malformed")
  n("member v missing", { t: "max" }, b("max", 5), "malformed")
  n("member t not a string", { t: 1, v: 1 }, b("max", 5), "malformed")
  n("unknown type", b("min", 1), b("min", 5), "unknown_bound")
  n("max value a string", b("max", "1"), b("max", 5), "malformed")
  n("count value an array", b("count", [1]), b("count", 5), "malformed")
  n("total value a string", b("total", "1"), b("total", 5), "malformed")
  n("prefix value a number", b("prefix", 1), b("prefix", "a"), "malformed")
  n("set value a string", b("set", "EUR"), b("set", ["EUR"]), "malformed")
  n("set element an object", b("set", ["a", {}]), b("set", ["a"]), "malformed")
  n("set element null", b("set", [null]), b("set", ["a"]), "malformed")
  n("window of three", b("window", [1, 2, 3]), b("window", [1, 9]), "malformed")
  n("window element a string", b("window", [1, "2"]), b("window", [1, 9]), "malformed")
  n("max negative", b("max", -1), b("max", 5), "noncanonical")
  n("count negative", b("count", -1), b("count", 5), "noncanonical")
  n("total negative", b("total", -1), b("total", 5), "noncanonical")
  n("window low above high", b("window", [6, 5]), b("window", [1, 9]), "noncanonical")
  n("set duplicate string", b("set", ["a", "a"]), b("set", ["a"]), "noncanonical")
  n("set duplicate integer", b("set", [1, "1", 1]), b("set", [1, "1"]), "noncanonical")
  n("bound with a fraction", { t: "max", v: new Raw("1.5") }, b("max", 5), "noncanonical")
  n("bound with a duplicate member", new Ordered([["t", "max"], ["v", 1], ["v", 2]]), b("max", 5), "noncanonical")
  // Orders within one bound and between operands (sections 3 and 14).
  n("members checked before the type", { t: "min", v: 1, x: 1 }, b("max", 5), "malformed")
  n("type checked before the value type", b("min", "x"), b("max", 5), "unknown_bound")
  n("value type checked before the value rule", b("max", "x"), b("max", 5), "malformed")
  n("set element type before a later duplicate", b("set", ["a", "a", {}]), b("set", ["a"]), "noncanonical")
  n("set element type in array order", b("set", ["a", {}, "a"]), b("set", ["a"]), "malformed")
  n("window shape before low above high", b("window", [9, "1"]), b("window", [1, 9]), "malformed")
  n("child checked before parent", b("max", -1), b("min", 5), "noncanonical")
  n("parent checked after a valid child", b("max", 1), b("min", 5), "unknown_bound")
  n("parent checked before the type change", b("max", 1), b("set", ["a", "a"]), "noncanonical")
  // satisfies (section 3 table; never count).
  s("max at the value", b("max", 100), 100)
  s("max zero argument", b("max", 100), 0)
  s("max over", b("max", 100), 101, "out_of_bounds")
  s("max negative argument", b("max", 100), -1, "out_of_bounds")
  s("max string argument", b("max", 100), "50", "out_of_bounds")
  s("total at the value", b("total", 700), 700)
  s("total zero argument", b("total", 700), 0)
  s("total over", b("total", 700), 701, "out_of_bounds")
  s("total negative argument", b("total", 700), -5, "out_of_bounds")
  s("total null argument", b("total", 700), null, "out_of_bounds")
  s("prefix equal", b("prefix", "shop"), "shop")
  s("prefix deeper", b("prefix", "shop"), "shop/books/new")
  s("prefix slash form", b("prefix", "shop/"), "shop/books")
  s("prefix slash form refuses the bare name", b("prefix", "shop/"), "shop", "out_of_bounds")
  s("prefix segment escape", b("prefix", "shop"), "shopping", "out_of_bounds")
  s("prefix number argument", b("prefix", "1"), 1, "out_of_bounds")
  s("set member", b("set", ["EUR", 7]), "EUR")
  s("set integer member", b("set", ["EUR", 7]), 7)
  s("set case differs", b("set", ["EUR"]), "eur", "out_of_bounds")
  s("set integer is not the string", b("set", ["7"]), 7, "out_of_bounds")
  s("set empty admits nothing", b("set", []), "EUR", "out_of_bounds")
  s("window low edge", b("window", [10, 20]), 10)
  s("window high edge", b("window", [10, 20]), 20)
  s("window below", b("window", [10, 20]), 9, "out_of_bounds")
  s("window above", b("window", [10, 20]), 21, "out_of_bounds")
  s("window object argument", b("window", [10, 20]), { v: 15 }, "out_of_bounds")
  s("bound checked first malformed", { t: "max", v: 1, x: 1 }, 5, "malformed")
  s("bound checked first unknown", b("between", [1, 2]), 5, "unknown_bound")
  s("bound checked first noncanonical", b("window", [3, 1]), 2, "noncanonical")
}

// ---- verify_writ (section 6.1 on a writ, sections 1.3, 2, 3, 3.2) --------------------------------
const W_ROOT = writ("root", { iss: A, hld: B.did })
const writs = (): void => {
  const w = (name: string, x: V, reason?: Reason) => add("verify_writ", name, { writ: x }, reason)
  const r = (label: string, change: Obj) => sign(A, { ...W_ROOT, nnc: nonce(`writ/${label}`), ...change })
  w("root writ", W_ROOT)
  w("child writ", child("child", W_ROOT, B, C.did, { amount: { t: "max", v: 100 } }))
  w("writ with only act", r("only-act", { bnd: { act: { t: "prefix", v: "a/" } } }))
  w("writ with hld and depth bounds", r("hld-depth", { bnd: { ...BASE_BND, hld: { t: "set", v: [C.did, D.did] }, depth: { t: "max", v: 2 } } }))
  w("writ with an empty hld set", r("hld-empty", { bnd: { ...BASE_BND, hld: { t: "set", v: [] } } }))
  w("writ with an unknown member", r("unknown-member", { note: { any: ["thing", 1] } }))
  w("writ with a known crit name", r("crit-known", { crit: ["exp"] }))
  w("writ with an empty crit", r("crit-empty", { crit: [] }))
  w("writ issued to itself", r("self", { hld: A.did }))
  w("writ nonce of 32 bytes", r("nnc32", { nnc: nonce("writ/nnc32", 32) }))
  w("writ with an integer set element", r("int-set", { bnd: { ...BASE_BND, tier: { t: "set", v: [1, 2, "3"] } } }))
  w("writ exp zero", r("exp0", { exp: 0 }))
  w("writ at nesting 64", r("nest64", { deep: nestedValue(63) }))
  // The signing input is the canonical form (section 1.2): names by UTF-16 code units, RFC 8785
  // string escapes, -0 read as 0. A verifier that sorted by code point, escaped differently or kept
  // "-0" would compute another signing input and refuse these.
  w("writ bound names sorted by utf16 code units", r("utf16", { bnd: { ...BASE_BND, "\uff61": { t: "max", v: 1 }, "\ud83d\ude00": { t: "max", v: 2 } } }))
  w("writ strings with rfc 8785 escapes", r("escapes", { note: "\u0001\u001f\"\\/\u00e9\u2028\ud83d\ude00\t" }))
  w("writ with minus zero written in the received bytes", withRaw(r("minus0", { note: 0 }), "note", "-0"))
  w("writ exp the largest safe integer", r("exp-max", { exp: Number.MAX_SAFE_INTEGER }))
  // Step 1: too_large.
  w("writ over 4096 canonical bytes", r("big", { bnd: { ...BASE_BND, act: { t: "prefix", v: "x".repeat(3900) } } }), "too_large")
  w("writ of exactly 4096 canonical bytes", (() => {
    const base = r("fit", { bnd: { ...BASE_BND, act: { t: "prefix", v: "" } } })
    const room = 4096 - canon(base).length
    return r("fit", { bnd: { ...BASE_BND, act: { t: "prefix", v: "y".repeat(room) } } })
  })())
  w("writ nesting 65", r("nest65", { deep: nestedValue(64) }), "too_large")
  w("writ nesting 65 before the fraction inside", withRaw(r("nest65f", { deep: 0 }), "deep", nestedArrays(64, "1.5").text), "too_large")
  // Step 2: noncanonical (section 1.1 rules 2 to 4 anywhere, then rule 5 on the writ's binary members).
  w("writ with a fraction in a bound", withRaw(W_ROOT, "exp", "1800086400.5"), "noncanonical")
  w("writ with an exponent", withRaw(W_ROOT, "exp", "18000864E2"), "noncanonical")
  w("writ with a duplicate member", withDuplicate(W_ROOT, "exp", T0), "noncanonical")
  w("writ with a duplicate member inside bnd", withRaw(W_ROOT, "bnd", '{"act":{"t":"prefix","v":"shop"},"act":{"t":"prefix","v":"x"}}'), "noncanonical")
  w("writ with a lone surrogate", withRaw(W_ROOT, "hld", '"\\ud834"'), "noncanonical")
  w("writ exp above 2^53 minus 1", withRaw(W_ROOT, "exp", "9007199254740993"), "noncanonical")
  w("writ nonce with padding", r("pad", { nnc: nonce("writ/pad") + "==" }), "noncanonical")
  w("writ nonce with a non alphabet character", r("plus", { nnc: nonce("writ/plus").slice(0, 21) + "+" }), "noncanonical")
  w("writ nonce with non zero trailing bits", r("bits", { nnc: nonce("writ/bits").slice(0, 21) + "B" }), "noncanonical")
  w("writ nonce length 1 mod 4", r("len", { nnc: nonce("writ/len", 18) + "A" }), "noncanonical")
  w("writ empty nonce", r("empty-nnc", { nnc: "" }), "noncanonical")
  w("writ signature with padding", { ...W_ROOT, sig: String(W_ROOT.sig) + "==" }, "noncanonical")
  w("writ prv with bad trailing bits", child("prv-bits", W_ROOT, B, C.did, {}, { prv: hashOf(W_ROOT).slice(0, 42) + "B" }), "noncanonical")
  w("writ fraction before bad base64", withRaw(r("pad2", { nnc: "AAAA==" }), "exp", "1.5"), "noncanonical")
  // Step 3.
  w("writ version 2", r("v2", { v: 2 }), "unsupported_version")
  w("writ version missing", sign(A, without(r("v-missing", {}), "v"), "writ"), "unsupported_version")
  w("writ version a string", r("v-str", { v: "1" }), "unsupported_version")
  w("writ typ call", r("typ-call", { typ: "call" }), "wrong_type")
  w("writ typ missing", sign(A, without(r("typ-missing", {}), "typ"), "writ"), "wrong_type")
  w("version checked before typ", r("v-typ", { v: 0, typ: "tally" }), "unsupported_version")
  w("binary encoding checked before version", r("b64-v", { v: 2, nnc: "" }), "noncanonical")
  // Step 4: crit.
  w("crit not an array", r("crit-str", { crit: "exp" }), "malformed")
  w("crit element not a string", r("crit-int", { crit: ["exp", 1] }), "malformed")
  w("crit names an unknown member", r("crit-unknown", { crit: ["flag"], flag: true }), "unsupported_critical")
  w("crit names an unknown absent member after known ones", r("crit-absent", { crit: ["crit", "exp", "foo"] }), "unsupported_critical")
  w("crit names an absent known member", sign(A, { ...without(r("crit-absent-known", {}), "prv"), crit: ["prv"] }), "malformed")
  w("crit names checked in array order", sign(A, { ...without(r("crit-order", {}), "prv"), crit: ["prv", "zzz"] }), "malformed")
  w("crit type before crit names", r("crit-type", { crit: ["zzz", 5] }), "malformed")
  w("crit checked before members", r("crit-before", { crit: ["zzz"], iss: "did:web:example.com" }), "unsupported_critical")
  // Step 5, members in table order: iss, hld, bnd, prv, exp, nnc, sig.
  w("iss missing", sign(A, without(r("iss-missing", {}), "iss")), "malformed")
  w("iss a did web", r("iss-web", { iss: "did:web:example.com" }), "bad_key")
  w("iss a number", r("iss-num", { iss: 7 }), "malformed")
  w("hld not a did key", r("hld-web", { hld: "did:example:123" }), "bad_key")
  w("hld with a wrong multicodec", r("hld-codec", { hld: "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme" }), "bad_key")
  w("hld did key with a bad base58 character", r("hld-b58", { hld: String(B.did).slice(0, -1) + "0" }), "bad_key")
  w("hld key with a point off the curve", r("hld-offcurve", { hld: didKeyFromPublicKey(offCurve()) }), "bad_key")
  w("hld key with y not below p", r("hld-ynoncanon", { hld: didKeyFromPublicKey(new Uint8Array(Buffer.from("f0" + "ff".repeat(30) + "7f", "hex"))) }), "bad_key")
  w("iss checked before hld", r("iss-hld", { iss: "x", hld: 5 }), "bad_key")
  w("hld key checked before exp", r("hld-exp", { hld: "nobody", exp: "soon" }), "bad_key")
  w("bnd missing", sign(A, without(r("bnd-missing", {}), "bnd")), "malformed")
  w("bnd an array", r("bnd-array", { bnd: [] }), "malformed")
  w("bnd without act", r("no-act", { bnd: without(BASE_BND, "act") }), "malformed")
  w("act presence checked before the bounds", r("act-first", { bnd: { amount: { t: "wide", v: 1 } } }), "malformed")
  w("bound of unknown type", r("unk", { bnd: { ...BASE_BND, zone: { t: "geo", v: "eu" } } }), "unknown_bound")
  w("bound negative max", r("neg", { bnd: { ...BASE_BND, amount: { t: "max", v: -1 } } }), "noncanonical")
  w("bound with an extra member", r("bextra", { bnd: { ...BASE_BND, amount: { t: "max", v: 1, u: "EUR" } } }), "malformed")
  w("bounds checked in canonical name order", r("order", { bnd: { ...BASE_BND, b: { t: "nope", v: 1 }, a: { t: "max", v: -1 } } }), "noncanonical")
  w("bounds order by utf16 units", r("order16", { bnd: { ...BASE_BND, Z: { t: "nope", v: 1 }, a: { t: "max", v: "1" } } }), "unknown_bound")
  w("act not a prefix", r("act-set", { bnd: { ...BASE_BND, act: { t: "set", v: ["shop"] } } }), "malformed")
  w("section 3 before section 3.2", r("s3-first", { bnd: { ...BASE_BND, act: { t: "set", v: ["shop"] }, zz: { t: "max", v: -3 } } }), "noncanonical")
  w("hld bound not a set", r("hld-prefix", { bnd: { ...BASE_BND, hld: { t: "prefix", v: "did:key:" } } }), "malformed")
  w("hld bound element not a key", r("hld-elem", { bnd: { ...BASE_BND, hld: { t: "set", v: [C.did, "carol"] } } }), "bad_key")
  w("depth not a max", r("depth-count", { bnd: { ...BASE_BND, depth: { t: "count", v: 1 } } }), "malformed")
  w("act checked before hld and depth", r("act-hld", { bnd: { ...BASE_BND, act: { t: "max", v: 1 }, hld: { t: "set", v: ["x"] } } }), "malformed")
  w("prv missing", sign(A, without(r("prv-missing", {}), "prv")), "malformed")
  w("prv a number", r("prv-num", { prv: 0 }), "malformed")
  w("prv decodes to 31 bytes", r("prv-31", { prv: b64u(new Uint8Array(31).fill(7)) }), "malformed")
  w("exp a string", r("exp-str", { exp: "1800086400" }), "malformed")
  w("exp missing", sign(A, without(r("exp-missing", {}), "exp")), "malformed")
  w("nonce of 15 bytes", r("nnc15", { nnc: nonce("writ/nnc15", 15) }), "malformed")
  w("nonce a number", r("nnc-num", { nnc: 12345 }), "malformed")
  w("signature of 63 bytes", { ...W_ROOT, sig: b64u(new Uint8Array(63).fill(1)) }, "malformed")
  w("signature missing", without(W_ROOT, "sig"), "malformed")
  w("signature a number", { ...W_ROOT, sig: 1 }, "malformed")
  // Step 6.
  w("tampered exp", { ...W_ROOT, exp: T0 + 2 * DAY }, "bad_signature")
  w("tampered bound", { ...W_ROOT, bnd: { ...BASE_BND, amount: { t: "max", v: 50001 } } }, "bad_signature")
  w("signed by another key", sign(X, { ...W_ROOT, nnc: nonce("writ/other-signer") }), "bad_signature")
  w("signed as a call", sign(A, { ...W_ROOT, nnc: nonce("writ/as-call") }, "call"), "bad_signature")
  w("signature of zeros", { ...W_ROOT, sig: b64u(new Uint8Array(64)) }, "bad_signature")
  w("unknown member changed after signing", { ...r("unk-tamper", { note: "a" }), note: "b" }, "bad_signature")
  // Small-order keys (2026-10-04): the holder, the issuer, an hld bound element -> bad_key.
  for (const [label, hex] of SMALL_ORDER) {
    w(`small order holder ${label}`, r(`so-hld-${label}`, { hld: smallOrderDid(hex) }), "bad_key")
  }
  // A small-order issuer with a forged signature (R = identity, S = 0 verifies under it for any message).
  w("small order issuer with a forged signature", { ...r("so-iss", { iss: smallOrderDid(SMALL_ORDER[0][1]) }), sig: b64u(Buffer.concat([Buffer.from(SMALL_ORDER[0][1], "hex"), new Uint8Array(32)])) }, "bad_key")
  w("small order issuer order 8 with a forged signature", { ...r("so-iss8", { iss: smallOrderDid(SMALL_ORDER[10][1]) }), sig: b64u(Buffer.concat([Buffer.from(SMALL_ORDER[0][1], "hex"), new Uint8Array(32)])) }, "bad_key")
  w("small order key in an hld bound", r("so-bnd", { bnd: { ...BASE_BND, hld: { t: "set", v: [C.did, smallOrderDid(SMALL_ORDER[6][1])] } } }), "bad_key")
  // Small-order R under a valid key (nonce r = 0 is R = identity) -> bad_signature.
  for (const [label, hex] of SMALL_ORDER) {
    const base = r(`so-r-${label}`, {})
    w(`signature R small order ${label}`, signWithR(A, "writ", base, hex), "bad_signature")
  }
  w("signature made with nonce r 0", signWithR(A, "writ", r("r0", {}), SMALL_ORDER[0][1]), "bad_signature")
}

// ---- verify_chain (section 4 as an operation, then expiry at now) -------------------------------
const KEYS = Array.from({ length: 10 }, (_, i) => key(`link${i}`))
/** A chain of `n` writs KEYS[0] -> KEYS[1] -> ... each a child of the one before. */
const linear = (label: string, n: number, bnd: Obj = BASE_BND): Array<Obj> => {
  const out: Array<Obj> = [writ(`${label}/0`, { iss: KEYS[0], hld: KEYS[1].did, bnd })]
  for (let i = 1; i < n; i++) out.push(child(`${label}/${i}`, out[i - 1], KEYS[i], KEYS[i + 1].did))
  return out
}
const W1 = W_ROOT // A -> B
const W2 = child("w2", W1, B, C.did, { act: { t: "prefix", v: "shop/books" }, amount: { t: "max", v: 30000 }, currency: { t: "set", v: ["EUR"] }, date: { t: "window", v: [20270110, 20270120] }, spend: { t: "total", v: 90000 } })
const W3 = child("w3", W2, C, D.did, { amount: { t: "max", v: 10000 } })
const chains = (): void => {
  const c = (name: string, chain: ReadonlyArray<V>, reason?: Reason, now?: number) => add("verify_chain", name, { chain: chain as V }, reason, now)
  const c2 = (label: string, bnd: Obj, p: Partial<WritP> = {}) => [W1, child(label, W1, B, C.did, bnd, p)]
  c("one writ", [W1])
  c("two links", [W1, W2])
  c("three links", [W1, W2, W3])
  c("eight links", linear("eight", 8))
  c("child adds a bound", c2("adds", { colour: { t: "set", v: ["red"] } }))
  c("child equal to its parent in every bound", c2("equal", {}, { exp: W1.exp as number }))
  c("child to itself", [W1, child("self", W1, B, B.did)])
  c("hld set honored", (() => { const p = writ("hldset", { iss: A, hld: B.did, bnd: { ...BASE_BND, hld: { t: "set", v: [C.did, D.did] } } }); return [p, child("hldset-c", p, B, D.did)] })())
  c("depth honored", (() => { const p = writ("depth1", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 1 } } }); return [p, child("depth1-c", p, B, C.did, { depth: { t: "max", v: 0 } })] })())
  c("depth zero on the leaf", [writ("depth0", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } })])
  c("before expiry", [W1, W2], undefined, (W2.exp as number) - 1)
  c("expired without a clock is not checked", [W1, W2])
  // Shape, as an operation.
  c("empty chain", [], "malformed")
  c("nine links", linear("nine", 9), "too_large")
  c("nine links before a bad signature", [...linear("nine", 8), { ...linear("nine", 9)[8], exp: 1 }], "too_large")
  c("element not an object", [W1, "writ"], "malformed")
  c("element null", [W1, null], "malformed")
  c("small order holder delegates with a forged signature", (() => {
    const so = smallOrderDid(SMALL_ORDER[0][1])
    const p = writ("so-chain", { iss: A, hld: so })
    const forged = { v: 1, typ: "writ", iss: so, hld: C.did, bnd: BASE_BND, prv: hashOf(p), exp: T0, nnc: nonce("writ/so-chain-c"), sig: b64u(Buffer.concat([Buffer.from(SMALL_ORDER[0][1], "hex"), new Uint8Array(32)])) }
    return [p, forged]
  })(), "bad_key")
  c("elements checked before writs", [{ ...W1, sig: "x" }, 7], "malformed")
  // Every writ passes section 6.1, in array order.
  c("second writ tampered", [W1, { ...W2, exp: (W2.exp as number) - 1 }], "bad_signature")
  c("first writ failure reported first", [{ ...W1, v: 2 }, { ...W2, typ: "call" }], "unsupported_version")
  c("writ checks before links", [W2, { ...W1, exp: "x" }], "malformed")
  c("bad key in a chain writ", [W1, resign(B, W2, { hld: "did:key:z6Mk" })], "bad_key")
  // Root prv, then adjacent pairs root first.
  c("root with a prv", [W2], "chain_broken")
  c("wrong order", [W2, W1], "chain_broken")
  c("issuer not the parent holder", [W1, child("not-holder", W1, X, C.did)], "chain_broken")
  c("prv mismatch", [W1, child("prv-mm", W1, B, C.did, {}, { prv: hashOf(W2) })], "chain_broken")
  c("prv null on a child", [W1, child("prv-null", W1, B, C.did, {}, { prv: null })], "chain_broken")
  c("child outlives parent", c2("outlives", {}, { exp: (W1.exp as number) + 1 }), "not_narrowed")
  c("child drops a bound", [W1, writ("drops", { iss: B, hld: C.did, bnd: without(BASE_BND, "date"), prv: hashOf(W1), exp: T0 })], "not_narrowed")
  c("child drops a total", [W1, writ("drops-total", { iss: B, hld: C.did, bnd: without(BASE_BND, "spend"), prv: hashOf(W1), exp: T0 })], "not_narrowed")
  c("child retypes a bound", c2("retypes", { uses: { t: "max", v: 1 } }), "not_narrowed")
  c("child widens a max", c2("w-max", { amount: { t: "max", v: 50001 } }), "not_narrowed")
  c("child widens a count", c2("w-count", { uses: { t: "count", v: 6 } }), "not_narrowed")
  c("child widens a total", c2("w-total", { spend: { t: "total", v: 200001 } }), "not_narrowed")
  c("child narrows a total", c2("n-total", { spend: { t: "total", v: 1 } }))
  c("child widens a set", c2("w-set", { currency: { t: "set", v: ["EUR", "GBP", "USD"] } }), "not_narrowed")
  c("child widens a window", c2("w-window", { date: { t: "window", v: [20261231, 20270131] } }), "not_narrowed")
  c("child escapes act by segment", c2("w-act", { act: { t: "prefix", v: "shopping" } }), "not_narrowed")
  c("child act widened to the slash form", [writ("act-deep", { iss: A, hld: B.did, bnd: { ...BASE_BND, act: { t: "prefix", v: "shop/books" } } }), child("act-deep-c", writ("act-deep", { iss: A, hld: B.did, bnd: { ...BASE_BND, act: { t: "prefix", v: "shop/books" } } }), B, C.did, { act: { t: "prefix", v: "shop/" } })], "not_narrowed")
  c("hld set violated", (() => { const p = writ("hldv", { iss: A, hld: B.did, bnd: { ...BASE_BND, hld: { t: "set", v: [D.did] } } }); return [p, child("hldv-c", p, B, C.did)] })(), "not_narrowed")
  c("hld set empty forbids delegation", (() => { const p = writ("hlde", { iss: A, hld: B.did, bnd: { ...BASE_BND, hld: { t: "set", v: [] } } }); return [p, child("hlde-c", p, B, C.did)] })(), "not_narrowed")
  c("depth exceeded", (() => { const p = writ("depthx", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 1 } } }); const q = child("depthx-1", p, B, C.did); return [p, q, child("depthx-2", q, C, D.did)] })(), "not_narrowed")
  c("depth zero with a child", (() => { const p = writ("depth0x", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } }); return [p, child("depth0x-1", p, B, C.did)] })(), "not_narrowed")
  c("issuer checked before prv", [W1, child("iss-prv", W1, X, C.did, {}, { prv: hashOf(W2) })], "chain_broken")
  c("exp checked before bounds", c2("exp-bnd", { amount: { t: "max", v: 99999 } }, { exp: (W1.exp as number) + 5 }), "not_narrowed")
  c("links checked before depth", (() => { const p = writ("ld", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } }); return [p, child("ld-1", p, B, C.did, { amount: { t: "max", v: 60000 } })] })(), "not_narrowed")
  // Expiry at now.
  c("root expired", [W1, W2], "expired", W1.exp as number)
  c("child expired only", [W1, W2], "expired", W2.exp as number)
  c("one writ expired after exp", [W1], "expired", (W1.exp as number) + 1000)
  c("structure checked before expiry", [W2, W1], "chain_broken", (W1.exp as number) + 1000)
  // Section 6.1 failures of a chain writ are reported as they are (section 4: every writ passes 6.1).
  c("chain writ nonce not canonical", [W1, resign(B, W2, { nnc: nonce("writ/w2") + "=" })], "noncanonical")
  c("chain writ of another type", [W1, resign(B, W2, { typ: "call" })], "wrong_type")
  c("chain writ with an unknown critical member", [W1, resign(B, W2, { crit: ["audit"], audit: 1 })], "unsupported_critical")
  c("child adds a bound of unknown type", c2("adds-unknown", { zone: { t: "geo", v: "eu" } }), "unknown_bound")
  c("child with a bound of unknown type before links", [W1, child("unknown-link", W1, X, C.did, { zone: { t: "geo", v: "eu" } })], "unknown_bound")
}

// ---- verify_call (section 7 steps 1 and 2, section 4, expiry, section 5) --------------------------
const ARGS: Obj = { amount: 25000, currency: "EUR", date: 20270115, spend: 40000, isbn: "978-0" }
const calls = (): void => {
  const k = (name: string, x: V, reason?: Reason, now?: number) => add("verify_call", name, { call: x }, reason, now)
  const CH = [W1, W2]
  const K = call("fwd", B, CH, "shop/books", ARGS)
  k("forward call", K)
  k("forward call deeper op", call("deeper", B, CH, "shop/books/paperback", ARGS))
  k("forward call on a one writ chain", call("one", A, [W1], "shop", ARGS))
  k("forward call before leaf exp", K, undefined, (W2.exp as number) - 1)
  k("forward call with extra args", call("extra-args", B, CH, "shop/books", { ...ARGS, gift: true }))
  k("forward call at window and max edges", call("edges", B, CH, "shop/books", { ...ARGS, amount: 30000, date: 20270120, spend: 90000 }))
  k("standing undo by the root issuer", call("undo-root", A, CH, "sys/undo", { tally: {} }))
  k("standing tallies by the leaf issuer", call("tallies-leaf", B, CH, "sys/tallies", {}))
  k("standing call after every exp", call("undo-late", A, CH, "sys/undo", { tally: {} }), undefined, (W1.exp as number) + DAY)
  k("standing call ignores bounds", call("standing-nobounds", B, CH, "sys/tallies", { amount: 10 ** 9 }))
  // Step 1: section 6.1 steps 1 to 5 on the call.
  k("call over 65536 bytes", call("big", B, CH, "shop/books", { ...ARGS, note: "n".repeat(65536) }), "too_large")
  k("call nesting 65", call("nest", B, CH, "shop/books", { ...ARGS, deep: nestedValue(63) }), "too_large")
  k("call nesting 64", call("nest64", B, CH, "shop/books", { ...ARGS, deep: nestedValue(62) }))
  k("call with a fraction in args", withRaw(K, "args", '{"amount":25000.5,"currency":"EUR","date":20270115,"spend":40000,"isbn":"978-0"}'), "noncanonical")
  k("call with a duplicate arg", withRaw(K, "args", '{"amount":1,"amount":25000,"currency":"EUR","date":20270115,"spend":40000}'), "noncanonical")
  k("chain writ with a duplicate member", withRaw(K, "chain", `[${canon(W1)},${canon(W2).replace('"typ":"writ"', '"typ":"writ","typ":"writ"')}]`), "noncanonical")
  k("chain writ with a fraction before the call's own members", withRaw(call("frac-chain", B, CH, "shop/books", ARGS, { v: 3 }), "chain", `[${canon(W1).replace(/"exp":(\d+)/, '"exp":$1.0')},${canon(W2)}]`), "noncanonical")
  k("call id with padding", call("idpad", B, CH, "shop/books", ARGS, { id: nonce("call/idpad") + "==" }), "noncanonical")
  k("call id of 15 bytes", call("id15", B, CH, "shop/books", ARGS, { id: nonce("call/id15", 15) }), "malformed")
  k("call id a number", call("idnum", B, CH, "shop/books", ARGS, { id: 1 }), "malformed")
  k("call version 0", call("v0", B, CH, "shop/books", ARGS, { v: 0 }), "unsupported_version")
  k("call typ writ", call("typw", B, CH, "shop/books", ARGS, { typ: "writ" }), "wrong_type")
  k("call crit unknown", call("crit", B, CH, "shop/books", ARGS, { crit: ["urgent"], urgent: 1 }), "unsupported_critical")
  k("call chain missing", sign(B, without(K, "chain")), "malformed")
  k("call chain empty", call("empty", B, [], "shop/books", ARGS), "malformed")
  k("call chain not an array", call("chain-obj", B, [], "shop/books", ARGS, { chain: W1 }), "malformed")
  k("call chain element not an object", call("chain-str", B, [W1, "w2"], "shop/books", ARGS), "malformed")
  k("call chain of nine", call("nine", KEYS[8], linear("nine", 9), "shop", ARGS), "too_large")
  k("call from not a key", call("from-web", B, CH, "shop/books", ARGS, { from: "did:web:b.example" }), "bad_key")
  k("call from a small order key", { ...call("from-so", B, CH, "shop/books", ARGS, { from: smallOrderDid(SMALL_ORDER[0][1]) }), sig: b64u(Buffer.concat([Buffer.from(SMALL_ORDER[0][1], "hex"), new Uint8Array(32)])) }, "bad_key")
  k("call op missing", sign(B, without(K, "op")), "malformed")
  k("call op a number", call("op-num", B, CH, "shop/books", ARGS, { op: 5 }), "malformed")
  k("call args missing", sign(B, without(K, "args")), "malformed")
  k("call args an array", call("args-arr", B, CH, "shop/books", []), "malformed")
  k("call id checked before the chain length", call("id-len", KEYS[8], linear("nine", 9), "shop", ARGS, { id: "c2hvcnQ" }), "malformed")
  k("call version before the chain length", call("v-len", KEYS[8], linear("nine", 9), "shop", ARGS, { v: 2 }), "unsupported_version")
  k("call from key checked before args", call("from-args", B, CH, "shop/books", ARGS, { from: "b", args: 1 }), "bad_key")
  k("call own members before chain writs", call("own-first", B, [{ ...W1, v: 9 }, W2], "shop/books", ARGS, { op: [] }), "malformed")
  // Step 2: the chain's writs, then the call's signature.
  k("chain writ tampered", call("writ-tamper", B, [W1, { ...W2, hld: D.did }], "shop/books", ARGS), "bad_signature")
  k("chain writ bad version before call signature", { ...call("writ-v", B, [{ ...W1, v: 3 }, W2], "shop/books", ARGS), sig: b64u(new Uint8Array(64).fill(9)) }, "unsupported_version")
  k("chain writs before call signature", { ...call("writs-first", B, [W1, { ...W2, hld: "nobody" }], "shop/books", ARGS), op: "shop/books/x" }, "bad_key")
  k("call tampered args", { ...K, args: { ...ARGS, amount: 1 } }, "bad_signature")
  k("call signed by another key", sign(X, { ...K, id: nonce("call/xsig") }), "bad_signature")
  k("call signature R small order", signWithR(B, "call", call("rso", B, CH, "shop/books", ARGS), SMALL_ORDER[0][1]), "bad_signature")
  k("call signature R order 8", signWithR(B, "call", call("rso8", B, CH, "shop/books", ARGS), SMALL_ORDER[12][1]), "bad_signature")
  // Section 4 on its chain.
  k("call chain broken", call("broken", C, [W1, W3], "shop/books", ARGS), "chain_broken")
  k("call chain not narrowed", call("nn", C, [W1, child("nn-w", W1, B, C.did, { amount: { t: "max", v: 70000 } })], "shop", ARGS), "not_narrowed")
  k("call chain root with prv", call("rootprv", C, [W2, W3], "shop/books", ARGS), "chain_broken")
  k("call leaf with a bound of unknown type", call("unk-leaf", B, [W1, child("unk-leaf-w", W1, B, C.did, { zone: { t: "geo", v: "eu" } })], "shop", ARGS), "unknown_bound")
  // Expiry, forward only.
  k("forward call at leaf exp", K, "expired", W2.exp as number)
  k("forward call at root exp", K, "expired", W1.exp as number)
  k("standing call by the holder after exp", call("stand-late", B, CH, "sys/tallies", {}), undefined, (W1.exp as number) + 1)
  k("chain checked before expiry", call("broken-late", C, [W1, W3], "shop/books", ARGS), "chain_broken", T0 + 10 * DAY)
  // Section 5: forward.
  k("forward from the leaf holder", call("from-hld", C, CH, "shop/books", ARGS), "no_standing")
  k("forward from a stranger", call("from-x", X, CH, "shop/books", ARGS), "no_standing")
  k("forward from the root issuer not the leaf issuer", call("from-root", A, CH, "shop/books", ARGS), "no_standing")
  k("op outside act", call("op-out", B, CH, "shop/music", ARGS), "forbidden_op")
  k("op segment escape", call("op-esc", B, CH, "shop/booksale", ARGS), "forbidden_op")
  k("op equal to a parent of act", call("op-parent", B, CH, "shop", ARGS), "forbidden_op")
  k("standing before forbidden op", call("nost-op", X, CH, "shop/music", ARGS), "no_standing")
  k("missing amount", call("miss-amount", B, CH, "shop/books", without(ARGS, "amount")), "missing_arg")
  k("missing total argument", call("miss-spend", B, CH, "shop/books", without(ARGS, "spend")), "missing_arg")
  k("count bound needs no argument", call("no-uses", B, CH, "shop/books", without(ARGS, "uses")))
  k("hld and depth bounds need no arguments", (() => {
    const p = writ("k-hd", { iss: A, hld: B.did, bnd: { ...BASE_BND, hld: { t: "set", v: [C.did] }, depth: { t: "max", v: 3 } } })
    return call("k-hd", A, [p], "shop/x", ARGS)
  })())
  k("missing before out of bounds", call("miss-oob", B, CH, "shop/books", { ...without(ARGS, "spend"), amount: 99999 }), "missing_arg")
  k("amount over the leaf max", call("oob-max", B, CH, "shop/books", { ...ARGS, amount: 30001 }), "out_of_bounds")
  k("amount within root but over leaf", call("oob-leaf", B, CH, "shop/books", { ...ARGS, amount: 45000 }), "out_of_bounds")
  k("currency not in set", call("oob-set", B, CH, "shop/books", { ...ARGS, currency: "GBP" }), "out_of_bounds")
  k("date outside window", call("oob-win", B, CH, "shop/books", { ...ARGS, date: 20270121 }), "out_of_bounds")
  k("argument over the leaf total", call("oob-total", B, CH, "shop/books", { ...ARGS, spend: 90001 }), "out_of_bounds")
  k("argument of the wrong type", call("oob-type", B, CH, "shop/books", { ...ARGS, amount: "25000" }), "out_of_bounds")
  k("forward op under sys with act sys", (() => {
    const p = writ("act-sys", { iss: A, hld: B.did, bnd: { act: { t: "prefix", v: "sys" } } })
    return call("act-sys", A, [p], "sys/reset", {})
  })(), "forbidden_op")
  // Section 5: standing.
  k("standing call by a stranger", call("st-x", X, CH, "sys/tallies", {}), "no_standing")
  k("standing call by the leaf holder", call("st-hld", C, CH, "sys/undo", { tally: {} }), "no_standing")
  k("standing call to an undefined operation", call("st-undef", A, CH, "sys/erase", {}), "forbidden_op")
  k("standing by a stranger to an undefined operation", call("st-x-undef", X, CH, "sys/erase", {}), "no_standing")
}

// ---- verify_tally (section 6.2) -----------------------------------------------------------------
const tallies = (): void => {
  const t = (name: string, w: V, k: V, x: V, reason?: Reason, res?: V) =>
    add("verify_tally", name, { writ: w, call: k, tally: x, ...(res === undefined ? {} : { res }) }, reason)
  // Leaf tally: A calls B under [W1]; B executes.
  const K1 = call("t-k1", A, [W1], "shop/books", ARGS)
  const RES = { order: "o-1", total: 25000 }
  const base: TallyP = { call: hashOf(K1), writ: hashOf(W1), op: "shop/books", acc: T0 + 60, out: hashOf(RES), used: { amount: 25000, spend: 25000 }, rev: { until: T0 + DAY } }
  const T1 = tally(B, base)
  t("leaf tally with its body", W1, K1, T1, undefined, RES)
  t("leaf tally without a body", W1, K1, T1)
  t("tally used equal to the max", W1, K1, tally(B, { ...base, used: { amount: 50000 } }))
  t("tally used names that are not bounds are ignored", W1, K1, tally(B, { ...base, used: { amount: 1, pages: 10 ** 12 } }))
  t("tally used within its writ total", W1, K1, tally(B, { ...base, used: { spend: 200000 } }))
  t("failed tally", W1, K1, tally(B, { ...base, st: "failed", err: { code: "shop.out_of_stock" }, out: null, rev: null, used: {} }))
  t("failed tally with an err ref", W1, K1, tally(B, { ...base, st: "failed", err: { code: "undeliverable", ref: hashOf(K1) }, out: null, rev: null, used: {} }))
  t("canceled tally", W1, K1, tally(B, { ...base, st: "canceled", err: { code: "canceled" }, out: null, rev: null }))
  t("pending tally", W1, K1, tally(B, { call: base.call, writ: base.writ, op: base.op, acc: base.acc, st: "pending", err: { code: "pending" } }))
  t("tally acc just before exp", W1, K1, tally(B, { ...base, acc: (W1.exp as number) - 1 }))
  t("standing tally after exp", W1, call("t-stand", A, [W1], "sys/tallies", {}), tally(B, { ...base, call: hashOf(call("t-stand", A, [W1], "sys/tallies", {})), op: "sys/tallies", acc: (W1.exp as number) + 100, used: {}, rev: null }))
  t("tally with an unknown member", W1, K1, tally(B, { ...base, extra: { note: "fine" } }))
  t("tally used of a count bound is ignored", W1, K1, tally(B, { ...base, used: { uses: 999, amount: 1 } }))
  t("result body a string", W1, K1, tally(B, { ...base, out: hashOf("done") }), undefined, "done")
  t("result body an empty object", W1, K1, tally(B, { ...base, out: hashOf({}) }), undefined, {})
  // Tally tree: A -> B under [W1]; B delegates W2 to C and calls C; C's tally in B's sub.
  const K2 = call("t-k2", B, [W1, W2], "shop/books", ARGS)
  const TC = tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 20000, spend: 20000 } })
  const treeP: TallyP = { ...base, used: { amount: 20000, spend: 20000 }, sub: [TC], wrt: [W2] }
  t("tally with a sub tree", W1, K1, tally(B, treeP))
  t("tally used above its sub tallies", W1, K1, tally(B, { ...treeP, used: { amount: 26000, spend: 26000 } }))
  t("tally with wrt and no sub", W1, K1, tally(B, { ...treeP, sub: [] }))
  t("sub tally op outside its writ act is not compared", W1, K1, tally(B, { ...treeP, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/music", acc: T0 + 70, used: { amount: 20000, spend: 20000 } })] }))
  t("standing sub tally after its writ exp", W1, K1, tally(B, { ...treeP, used: {}, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "sys/tallies", acc: (W2.exp as number) + 50 })] }))
  t("tally with two sub tallies within the max", W1, K1, (() => {
    const TC2 = tally(C, { call: nonce("t-other-call", 32), writ: hashOf(W2), op: "shop/books", acc: T0 + 80, used: { amount: 20000 } })
    return tally(B, { ...treeP, used: { amount: 40000, spend: 20000 }, sub: [TC, TC2] })
  })())
  // Three levels: C delegates W3 to D.
  const K3 = call("t-k3", C, [W1, W2, W3], "shop/books", { ...ARGS, amount: 9000 })
  const TD = tally(D, { call: hashOf(K3), writ: hashOf(W3), op: "shop/books", acc: T0 + 75, used: { amount: 9000 } })
  const TC3 = tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 9000 }, sub: [TD], wrt: [W3] })
  t("three level tree", W1, K1, tally(B, { ...base, used: { amount: 9000 }, sub: [TC3], wrt: [W2] }))
  // Unverifiable: T fails section 6.1.
  t("tally nesting 65", W1, K1, tally(B, { ...base, extra: { deep: nestedValue(64) } }), "too_large")
  t("tally with a fraction", W1, K1, withRaw(T1, "acc", "1800000060.0"), "noncanonical")
  t("tally call with padding", W1, K1, tally(B, { ...base, call: hashOf(K1) + "=" }), "noncanonical")
  t("tally out with bad trailing bits", W1, K1, tally(B, { ...base, out: hashOf(RES).slice(0, 42) + "z" }), "noncanonical")
  t("tally version 2", W1, K1, tally(B, { ...base, extra: { v: 2 } }), "unsupported_version")
  t("tally typ writ", W1, K1, tally(B, { ...base, extra: { typ: "writ" } }), "wrong_type")
  t("tally crit unknown", W1, K1, tally(B, { ...base, extra: { crit: ["audit"], audit: true } }), "unsupported_critical")
  t("tally ok with an err", W1, K1, tally(B, { ...base, err: { code: "x" } }), "malformed")
  t("tally st not one of the four", W1, K1, tally(B, { ...base, st: "done", err: { code: "x" } }), "malformed")
  t("tally failed without an err", W1, K1, tally(B, { ...base, st: "failed" }), "malformed")
  t("tally err code not a string", W1, K1, tally(B, { ...base, st: "failed", err: { code: 1 } }), "malformed")
  t("tally err ref not a hash", W1, K1, tally(B, { ...base, st: "failed", err: { code: "x", ref: b64u(new Uint8Array(8)) } }), "malformed")
  t("tally used negative", W1, K1, tally(B, { ...base, used: { amount: -1 } }), "malformed")
  t("tally used a string", W1, K1, tally(B, { ...base, used: { amount: "1" } }), "malformed")
  t("tally rev until a string", W1, K1, tally(B, { ...base, rev: { until: "later" } }), "malformed")
  t("tally sub not an array", W1, K1, tally(B, { ...base, extra: { sub: {} } }), "malformed")
  t("tally wrt element not an object", W1, K1, tally(B, { ...base, wrt: ["w2"] }), "malformed")
  t("tally acc missing", W1, K1, sign(B, without(T1, "acc")), "malformed")
  t("tally writ of 32 bytes missing one", W1, K1, tally(B, { ...base, writ: b64u(new Uint8Array(31)) }), "malformed")
  t("pending tally with another err code", W1, K1, tally(B, { call: base.call, writ: base.writ, op: base.op, acc: base.acc, st: "pending", err: { code: "unknown_outcome" } }), "malformed")
  t("pending tally with wrt", W1, K1, tally(B, { call: base.call, writ: base.writ, op: base.op, acc: base.acc, st: "pending", err: { code: "pending" }, wrt: [W2] }), "malformed")
  t("pending tally with used", W1, K1, tally(B, { call: base.call, writ: base.writ, op: base.op, acc: base.acc, st: "pending", err: { code: "pending" }, used: { amount: 1 } }), "malformed")
  t("pending tally with out", W1, K1, tally(B, { call: base.call, writ: base.writ, op: base.op, acc: base.acc, st: "pending", err: { code: "pending" }, out: hashOf(RES) }), "malformed")
  t("tally signed by the caller", W1, K1, tally(A, base), "bad_signature")
  t("tally tampered used", W1, K1, { ...T1, used: { amount: 1 } }, "bad_signature")
  t("tally signature R small order", W1, K1, signWithR(B, "tally", T1, SMALL_ORDER[6][1]), "bad_signature")
  // Signed unauthorized: steps 2 to 10.
  t("tally for another call", W1, K1, tally(B, { ...base, call: hashOf(K2) }), "tally_mismatch")
  t("tally for another writ", W1, K1, tally(B, { ...base, writ: hashOf(W2) }), "tally_mismatch")
  t("tally for another op", W1, K1, tally(B, { ...base, op: "shop/books/other" }), "tally_mismatch")
  t("tally call checked before writ", W1, K1, tally(B, { ...base, call: hashOf(K2), writ: hashOf(W2) }), "tally_mismatch")
  t("tally acc at exp", W1, K1, tally(B, { ...base, acc: W1.exp as number }), "expired")
  t("tally acc after exp", W1, K1, tally(B, { ...base, acc: (W1.exp as number) + 1 }), "expired")
  t("tally out differs from the body", W1, K1, T1, "tally_mismatch", { ...RES, total: 1 })
  t("tally with out null and a body", W1, K1, tally(B, { ...base, out: null }), "tally_mismatch", RES)
  t("tally expiry before out", W1, K1, tally(B, { ...base, acc: W1.exp as number }), "expired", { other: 1 })
  t("tally used over the max", W1, K1, tally(B, { ...base, used: { amount: 50001 } }), "out_of_bounds")
  t("tally used over the total", W1, K1, tally(B, { ...base, used: { spend: 200001 } }), "out_of_bounds")
  t("tally out checked before used", W1, K1, tally(B, { ...base, used: { amount: 50001 } }), "tally_mismatch", { x: 1 })
  t("tally used checked before wrt", W1, K1, tally(B, { ...treeP, used: { amount: 50001 }, wrt: [{ ...W2, exp: 1 }] }), "out_of_bounds")
  t("tally op checked before wrt contents", W1, K1, tally(B, { ...treeP, op: "shop/x", wrt: [{ ...W2, exp: 1 }] }), "tally_mismatch")
  t("wrt writ tampered", W1, K1, tally(B, { ...treeP, sub: [], wrt: [{ ...W2, exp: (W2.exp as number) - 5 }] }), "bad_signature")
  t("wrt writ not a child of the leaf", W1, K1, tally(B, { ...treeP, sub: [], wrt: [W3] }), "chain_broken")
  t("wrt writ widens the leaf", W1, K1, tally(B, { ...treeP, sub: [], wrt: [child("t-wide", W1, B, C.did, { amount: { t: "max", v: 60000 } })] }), "not_narrowed")
  t("wrt writ outlives the leaf", W1, K1, tally(B, { ...treeP, sub: [], wrt: [child("t-outlive", W1, B, C.did, {}, { exp: (W1.exp as number) + 1 })] }), "not_narrowed")
  t("depth applies to wrt", (() => {
  t("wrt writ with a bound of unknown type", W1, K1, tally(B, { ...treeP, sub: [], wrt: [child("t-unk", W1, B, C.did, { zone: { t: "geo", v: "eu" } })] }), "unknown_bound")
  t("wrt writ with a holder that is not a key", W1, K1, tally(B, { ...treeP, sub: [], wrt: [child("t-badkey", W1, B, "did:key:z6MkNOTAKEY")] }), "bad_key")
    const Wd = writ("t-depth", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } })
    return Wd
  })(), call("t-depth-k", A, [writ("t-depth", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } })], "shop/books", ARGS), (() => {
    const Wd = writ("t-depth", { iss: A, hld: B.did, bnd: { ...BASE_BND, depth: { t: "max", v: 0 } } })
    const Kd = call("t-depth-k", A, [Wd], "shop/books", ARGS)
    const Xd = child("t-depth-c", Wd, B, C.did, { depth: { t: "max", v: 0 } })
    return tally(B, { ...base, call: hashOf(Kd), writ: hashOf(Wd), wrt: [Xd] })
  })(), "not_narrowed")
  t("wrt checked before sub", W1, K1, tally(B, { ...treeP, wrt: [{ ...W2, exp: 1 }], sub: [{ ...TC, writ: hashOf(W3) }] }), "bad_signature")
  t("sub without wrt", W1, K1, tally(B, { ...treeP, wrt: [] }), "sub_unmatched")
  t("sub names another writ", W1, K1, tally(B, { ...treeP, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W3), op: "shop/books", acc: T0 + 70 })] }), "sub_unmatched")
  t("sub unmatched before the sub tally is checked", W1, K1, tally(B, { ...treeP, sub: [{ writ: hashOf(W3), v: 7 }] }), "sub_unmatched")
  t("sub element without writ", W1, K1, tally(B, { ...treeP, sub: [{ v: 1, typ: "tally" }] }), "sub_unmatched")
  t("tally signature checked before sub unmatched", W1, K1, { ...tally(B, { ...treeP, wrt: [] }), acc: T0 + 61 }, "bad_signature")
  t("tally signature checked before wrt contents", W1, K1, { ...tally(B, { ...treeP, wrt: [{ ...W2, exp: 1 }] }), acc: T0 + 61 }, "bad_signature")
  t("sub tally signed by the wrong key", W1, K1, tally(B, { ...treeP, sub: [tally(D, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 20000, spend: 20000 } })] }), "bad_signature")
  t("sub tally malformed", W1, K1, tally(B, { ...treeP, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, st: "ok", err: { code: "x" } })] }), "malformed")
  t("sub tally over its own writ max", W1, K1, tally(B, { ...treeP, used: { amount: 35000, spend: 35000 }, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 35000, spend: 35000 } })] }), "out_of_bounds")
  t("sub tally over its own writ total", W1, K1, tally(B, { ...treeP, used: { spend: 95000 }, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { spend: 95000 } })] }), "out_of_bounds")
  t("sub tally acc at its writ exp", W1, K1, tally(B, { ...treeP, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: W2.exp as number, used: { amount: 20000, spend: 20000 } })] }), "expired")
  t("own used below its sub tally", W1, K1, tally(B, { ...treeP, used: { amount: 19999, spend: 20000 } }), "out_of_bounds")
  t("own used absent below its sub tally", W1, K1, tally(B, { ...treeP, used: { spend: 20000 } }), "out_of_bounds")
  t("sum of sub tallies exceeds the parent used", W1, K1, (() => {
    const TC2 = tally(C, { call: nonce("t-other-call2", 32), writ: hashOf(W2), op: "shop/books", acc: T0 + 80, used: { amount: 20000 } })
    return tally(B, { ...treeP, used: { amount: 30000, spend: 20000 }, sub: [TC, TC2] })
  })(), "out_of_bounds")
  t("fan out rolled up past the root max", W1, K1, (() => {
    const sub = [0, 1, 2].map((i) => tally(C, { call: nonce(`t-fan${i}`, 32), writ: hashOf(W2), op: "shop/books", acc: T0 + 80, used: { amount: 20000 } }))
    return tally(B, { ...treeP, used: { amount: 50000 }, sub })
  })(), "out_of_bounds")
  t("nested intermediary reports less than its leaf", W1, K1, tally(B, { ...base, used: { amount: 9000 }, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: {}, sub: [TD], wrt: [W3] })], wrt: [W2] }), "out_of_bounds")
  t("sub tree wrt depth", W1, K1, (() => {
    const W2d = child("t-w2d", W1, B, C.did, { depth: { t: "max", v: 0 } })
    const K2d = call("t-k2d", B, [W1, W2d], "shop/books", ARGS)
    const W3d = child("t-w3d", W2d, C, D.did)
    const TCd = tally(C, { call: hashOf(K2d), writ: hashOf(W2d), op: "shop/books", acc: T0 + 70, wrt: [W3d] })
    return tally(B, { ...base, used: {}, sub: [TCd], wrt: [W2d] })
  })(), "not_narrowed")
  t("sub tally sub unmatched deeper", W1, K1, tally(B, { ...base, used: { amount: 9000 }, sub: [tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 9000 }, sub: [TD], wrt: [] })], wrt: [W2] }), "sub_unmatched")
  t("first sub tree completed before the next", W1, K1, (() => {
    const bad1 = tally(C, { call: hashOf(K2), writ: hashOf(W2), op: "shop/books", acc: T0 + 70, used: { amount: 35000 } })
    const bad2 = tally(D, { call: nonce("t-bad2", 32), writ: hashOf(W2), op: "shop/books", acc: T0 + 70 })
    return tally(B, { ...treeP, used: { amount: 35000 }, sub: [bad1, bad2] })
  })(), "out_of_bounds")
}

// ---- verify_revoke (section 9.1) ----------------------------------------------------------------
const revokes = (): void => {
  const r = (name: string, x: V, reason?: Reason) => add("verify_revoke", name, { revoke: x }, reason)
  r("revoke the root by its issuer", revoke(A, hashOf(W1), [W1]))
  r("revoke the leaf by the root issuer", revoke(A, hashOf(W2), [W1, W2]))
  r("revoke the leaf by its issuer", revoke(B, hashOf(W2), [W1, W2]))
  r("key wide revoke", revoke(X, "*", []))
  add("verify_revoke", "revoke after every exp", { revoke: revoke(C, hashOf(W3), [W1, W2, W3]) }, undefined, (W1.exp as number) + DAY)
  r("revoke with an unknown member", revoke(A, hashOf(W1), [W1], { why: "lost laptop" }))
  // Step 1.
  r("revoke nesting 65", revoke(A, hashOf(W1), [W1], { deep: nestedValue(64) }), "too_large")
  r("revoke with a fraction", withRaw(revoke(A, hashOf(W1), [W1]), "v", "1.0"), "noncanonical")
  r("revoke writ with padding", revoke(A, hashOf(W1) + "=", [W1]), "noncanonical")
  r("revoke version 2", revoke(A, hashOf(W1), [W1], { v: 2 }), "unsupported_version")
  r("revoke typ writ", revoke(A, hashOf(W1), [W1], { typ: "writ" }), "wrong_type")
  r("revoke crit unknown", revoke(A, hashOf(W1), [W1], { crit: ["scope"], scope: "all" }), "unsupported_critical")
  r("revoke writ not canonical base64url", revoke(A, "writ-1", [W1]), "noncanonical")
  r("revoke writ of 31 bytes", revoke(A, b64u(new Uint8Array(31).fill(3)), [W1]), "malformed")
  r("revoke writ a number", revoke(A, 0 as unknown as string, [W1]), "malformed")
  r("revoke iss not a key", revoke(A, hashOf(W1), [W1], { iss: "alice" }), "bad_key")
  r("revoke iss small order", revoke(A, hashOf(W1), [W1], { iss: smallOrderDid(SMALL_ORDER[4][1]) }), "bad_key")
  r("revoke chain of nine", (() => { const n = linear("nine", 9); return revoke(KEYS[0], hashOf(n[8]), n) })(), "too_large")
  r("revoke iss checked before chain length", (() => { const n = linear("nine", 9); return revoke(KEYS[0], hashOf(n[8]), n, { iss: 1 }) })(), "malformed")
  r("revoke chain element not an object", revoke(A, hashOf(W1), [[W1]]), "malformed")
  r("revoke of one writ with an empty chain", revoke(A, hashOf(W1), []), "malformed")
  r("key wide revoke with a chain", revoke(A, "*", [W1]), "malformed")
  r("key wide with a chain and wrong signer is malformed first", { ...revoke(A, "*", [W1]), sig: String(revoke(X, "*", []).sig) }, "malformed")
  // Step 2, then step 3.
  r("bad writ in the chain before the revoke signature", { ...revoke(A, hashOf(W1), [{ ...W1, v: 5 }]), sig: b64u(new Uint8Array(64)) }, "unsupported_version")
  r("chain writ malformed", revoke(A, hashOf(W1), [resign(A, W1, { nnc: "c2hvcnQ" })]), "malformed")
  r("revoke signed by another key", { ...revoke(A, hashOf(W1), [W1]), sig: String(revoke(X, hashOf(W1), [W1]).sig) }, "bad_signature")
  r("revoke tampered", { ...revoke(A, hashOf(W2), [W1, W2]), writ: hashOf(W1), chain: [W1] }, "bad_signature")
  r("revoke signature R small order", signWithR(A, "revoke", revoke(A, hashOf(W1), [W1]), SMALL_ORDER[2][1]), "bad_signature")
  r("key wide revoke signed as a writ", sign(X, { v: 1, typ: "revoke", writ: "*", iss: X.did, chain: [] }, "writ"), "bad_signature")
  // Step 4.
  r("revoke chain out of order", revoke(A, hashOf(W1), [W2, W1]), "chain_broken")
  r("revoke chain not narrowed", (() => { const wide = child("rv-wide", W1, B, C.did, { amount: { t: "max", v: 70000 } }); return revoke(A, hashOf(wide), [W1, wide]) })(), "not_narrowed")
  r("revoke leaf mismatch", revoke(A, hashOf(W1), [W1, W2]), "chain_broken")
  r("revoke by the leaf holder", revoke(C, hashOf(W2), [W1, W2]), "no_standing")
  r("revoke by a stranger", revoke(X, hashOf(W1), [W1]), "no_standing")
  r("leaf mismatch before standing", revoke(X, hashOf(W1), [W1, W2]), "chain_broken")
  r("chain validity before leaf mismatch", revoke(A, hashOf(W3), [W2, W3]), "chain_broken")
  r("revoke chain writ with a bound of unknown type", (() => { const u = child("rv-unk", W1, B, C.did, { zone: { t: "geo", v: "eu" } }); return revoke(B, hashOf(u), [W1, u]) })(), "unknown_bound")
  r("revoke chain broken by issuer", (() => { const u = child("rv-x", W1, X, C.did); return revoke(A, hashOf(u), [W1, u]) })(), "chain_broken")
}

// ---- check_ack (section 9.4) --------------------------------------------------------------------
const acks = (): void => {
  const CH = [W1, W2] // C is the executor (W2.hld)
  const R = revoke(A, hashOf(W1), [W1])
  const K = call("a-k", B, CH, "shop/books", ARGS)
  const T = tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 50, used: { amount: 25000 } })
  const RCV = T0 + 100
  const heldBody = { held: [{ call: hashOf(K), tally: hashOf(T) }], open: [] }
  const a = (name: string, p: { revoke?: V; ack?: V; res?: V; chain?: ReadonlyArray<V>; tally?: V }, reason?: Reason) => {
    const res = p.res ?? heldBody
    add("check_ack", name, {
      revoke: p.revoke ?? R,
      ack: p.ack ?? ack(C, hashOf(R), RCV, res),
      res,
      chain: (p.chain ?? CH) as V,
      tally: p.tally ?? T
    }, reason)
  }
  const empty = { held: [], open: [] }
  // Accounted for, or the ack says nothing (step 6).
  a("held tally", {})
  a("final tally of an open call", { res: { held: [], open: [hashOf(K)] } })
  a("pending tally of a held call", {
    res: heldBody,
    tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 50, st: "pending", err: { code: "pending" } })
  })
  a("pending tally of an open call", { res: { held: [], open: [hashOf(K)] }, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 50, st: "pending", err: { code: "pending" } }) })
  a("a refusal reports no work", { res: empty, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: RCV + 10, st: "failed", err: { code: "revoked" } }) })
  a("a standing call is not forward work", { res: empty, tally: tally(C, { call: hashOf(call("a-st", A, CH, "sys/tallies", {})), writ: hashOf(W2), op: "sys/tallies", acc: RCV + 10 }) })
  a("a revoke of a sibling writ does not cover the chain", (() => {
    const sib = child("a-sib", W1, B, D.did)
    const Rs = revoke(B, hashOf(sib), [W1, sib])
    return { revoke: Rs, ack: ack(C, hashOf(Rs), RCV, empty), res: empty }
  })())
  a("an ack by another executor says nothing", (() => ({ ack: ack(D, hashOf(R), RCV, empty), res: empty }))())
  a("a writ that expired before rcv", (() => {
    const W2e = child("a-w2e", W1, B, C.did, {}, { exp: T0 + 90 })
    const Ke = call("a-ke", B, [W1, W2e], "shop/books", ARGS)
    const Te = tally(C, { call: hashOf(Ke), writ: hashOf(W2e), op: "shop/books", acc: T0 + 50, used: { amount: 1 } })
    return { chain: [W1, W2e], tally: Te, res: empty, ack: ack(C, hashOf(R), RCV, empty) }
  })())
  a("a writ that expires at rcv", (() => {
    const W2e = child("a-w2r", W1, B, C.did, {}, { exp: RCV })
    const Ke = call("a-kr", B, [W1, W2e], "shop/books", ARGS)
    const Te = tally(C, { call: hashOf(Ke), writ: hashOf(W2e), op: "shop/books", acc: T0 + 50 })
    return { chain: [W1, W2e], tally: Te, res: empty, ack: ack(C, hashOf(R), RCV, empty) }
  })())
  a("key wide revoke accounted", (() => {
    const Rk = revoke(B, "*", [])
    return { revoke: Rk, ack: ack(C, hashOf(Rk), RCV, heldBody) }
  })())
  a("revoke of the leaf writ accounted", (() => {
    const Rl = revoke(B, hashOf(W2), CH)
    return { revoke: Rl, ack: ack(C, hashOf(Rl), RCV, heldBody) }
  })())
  // Step 7: revoked.
  a("work after the revoke not accounted", { res: empty }, "revoked")
  a("work with acc backdated not accounted", { res: empty, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 1, used: { amount: 25000 } }) }, "revoked")
  a("failed work that consumed", { res: empty, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: RCV + 10, st: "failed", err: { code: "shop.partial" }, used: { amount: 10 } }) }, "revoked")
  a("canceled work is work", { res: empty, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: RCV + 10, st: "canceled", err: { code: "canceled" } }) }, "revoked")
  a("failed work that delegated", { res: empty, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: RCV + 10, st: "failed", err: { code: "undeliverable" }, wrt: [W3] }) }, "revoked")
  a("held entry names another tally", { res: { held: [{ call: hashOf(K), tally: hashOf(W1) }], open: [] } }, "revoked")
  a("pending tally whose call is held only by another call", { res: { held: [{ call: hashOf(W1), tally: hashOf(T) }], open: [] }, tally: tally(C, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 50, st: "pending", err: { code: "pending" } }) }, "revoked")
  a("key wide revoke covers a writ the key issued", (() => {
    const Rk = revoke(B, "*", [])
    return { revoke: Rk, ack: ack(C, hashOf(Rk), RCV, empty), res: empty }
  })(), "revoked")
  // Steps 1 to 5, in order.
  a("revoke checked first", { revoke: { ...R, writ: hashOf(W2) }, ack: { ...ack(C, hashOf(R), RCV, heldBody), typ: "tally" } }, "bad_signature")
  a("revoke without standing", (() => { const Rx = revoke(X, hashOf(W1), [W1]); return { revoke: Rx, ack: ack(C, hashOf(Rx), RCV, heldBody) } })(), "no_standing")
  a("ack typ tally", { ack: sign(C, { ...ack(C, hashOf(R), RCV, heldBody), typ: "tally" }, "tally") }, "wrong_type")
  a("ack rcv not an integer", { ack: ack(C, hashOf(R), RCV, heldBody, { rcv: "now" }) }, "malformed")
  a("ack out missing", { ack: sign(C, without(ack(C, hashOf(R), RCV, heldBody), "out")) }, "malformed")
  a("ack iss small order", { ack: { ...ack(C, hashOf(R), RCV, heldBody, { iss: smallOrderDid(SMALL_ORDER[8][1]) }) } }, "bad_key")
  a("ack over 4096 bytes", { ack: ack(C, hashOf(R), RCV, heldBody, { note: "z".repeat(4096) }) }, "too_large")
  a("ack revoke with padding", { ack: ack(C, hashOf(R) + "=", RCV, heldBody) }, "noncanonical")
  a("ack signed by another key", { ack: { ...ack(C, hashOf(R), RCV, heldBody), sig: String(ack(X, hashOf(R), RCV, heldBody).sig) } }, "bad_signature")
  a("ack signature R small order", { ack: signWithR(C, "ack", ack(C, hashOf(R), RCV, heldBody), SMALL_ORDER[11][1]) }, "bad_signature")
  a("ack of another revoke", (() => { const R2 = revoke(B, hashOf(W2), CH); return { ack: ack(C, hashOf(R2), RCV, heldBody) } })(), "ack_mismatch")
  a("body substituted", { ack: ack(C, hashOf(R), RCV, empty), res: heldBody }, "ack_mismatch")
  a("body held not an array", { res: { held: {}, open: [] } }, "malformed")
  a("body open missing", { res: { held: [] } }, "malformed")
  a("ack checked before the chain", { ack: { ...ack(C, hashOf(R), RCV, heldBody), v: 2 }, chain: [W2, W1] }, "unsupported_version")
  a("chain checked before the tally", { chain: [W1, child("a-wide", W1, B, C.did, { amount: { t: "max", v: 99999 } })], tally: { ...T, typ: "ack" } }, "not_narrowed")
  a("tally fails section 6.1", { tally: { ...T, acc: T0 + 51 } }, "bad_signature")
  a("tally signed by another executor", { tally: tally(D, { call: hashOf(K), writ: hashOf(W2), op: "shop/books", acc: T0 + 50 }) }, "bad_signature")
  a("tally for another writ", { tally: tally(C, { call: hashOf(K), writ: hashOf(W1), op: "shop/books", acc: T0 + 50 }) }, "tally_mismatch")
  a("ack with an unknown critical member", { ack: ack(C, hashOf(R), RCV, heldBody, { crit: ["seq"], seq: 4 }) }, "unsupported_critical")
  a("chain broken", { chain: [W1, child("a-broken", W1, X, C.did)] }, "chain_broken")
  a("chain writ with a bound of unknown type", { chain: [W1, child("a-unk", W1, B, C.did, { zone: { t: "geo", v: "eu" } })] }, "unknown_bound")
  a("chain writ expired long before now is not checked", (() => {
    const W2e = child("a-w2old", W1, B, C.did, {}, { exp: T0 + 1 })
    const Ke = call("a-kold", B, [W1, W2e], "shop/books", ARGS)
    const Te = tally(C, { call: hashOf(Ke), writ: hashOf(W2e), op: "shop/books", acc: T0 })
    return { chain: [W1, W2e], tally: Te, res: empty, ack: ack(C, hashOf(R), RCV, empty) }
  })())
}

// ---------------------------------------------------------------------------------------------

/** Every vector, in generation order. */
export const generate = (): ReadonlyArray<Vector> => {
  vectors.length = 0
  canonicalize()
  bounds()
  writs()
  chains()
  calls()
  tallies()
  revokes()
  acks()
  return [...vectors]
}

/** The file text of one vector (section 14 shape). */
export const render = (v: Vector): string =>
  pretty({
    name: v.name, op: v.op, input: v.input, expect: v.expect,
    ...(v.reason === undefined ? {} : { reason: v.reason }), ...(v.now === undefined ? {} : { now: v.now })
  }) + "\n"

export const corpusDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "conformance", "vectors")

/** Writes the corpus into `dir`, replacing every `*.json` there. */
export const writeCorpus = (dir: string = corpusDir): ReadonlyArray<Vector> => {
  mkdirSync(dir, { recursive: true })
  for (const f of readdirSync(dir)) if (f.endsWith(".json")) rmSync(join(dir, f))
  const vs = generate()
  for (const v of vs) writeFileSync(join(dir, v.file), render(v))
  return vs
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const vs = writeCorpus(process.argv[2] === undefined ? corpusDir : resolve(process.argv[2]))
  const byOp = new Map<string, number>()
  for (const v of vs) byOp.set(v.op, (byOp.get(v.op) ?? 0) + 1)
  console.log(`wrote ${vs.length} vectors: ${[...byOp].map(([o, n]) => `${o} ${n}`).join(", ")}`)
}
