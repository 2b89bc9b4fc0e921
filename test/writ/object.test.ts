// Section 6.1 on single objects (writ, call, revoke, ack), and section 4 on chains: one test per
// rejection path, each object built valid and then given exactly the fault under test.
import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import type { JsonObject } from "../../src/kernel/json.js"
import { verifyWrit } from "../../src/writ/writ.js"
import { checkExpiry, verifyChain } from "../../src/writ/chain.js"
import { verifyCall } from "../../src/writ/call.js"
import { Received } from "../../src/writ/verify.js"
import { canonicalText, identity } from "../../src/writ/sign.js"
import { A, B, C, EXP, X, keyOf, resign, world } from "./fixtures.js"

const reason = (eff: Effect.Effect<unknown, { reason: string }>) => {
  const r = Effect.runSync(Effect.either(eff))
  return Either.isLeft(r) ? r.left.reason : "accept"
}
const w = world()
const root = w.root.writ as unknown as JsonObject
const child = w.child.writ as unknown as JsonObject
const callJson = w.call.call.json
const writWith = (patch: Record<string, unknown>, signer = A, base: JsonObject = root): JsonObject => {
  const o: Record<string, unknown> = { ...base, ...patch }
  for (const k of Object.keys(patch)) if (patch[k] === undefined) delete o[k]
  return resign("writ", o as JsonObject, signer)
}
const bytes = (s: string) => new Received(s)

describe("section 6.1 on a writ", () => {
  it("accepts the issued writ from bytes and from a value", () => {
    expect(reason(verifyWrit(bytes(canonicalText(root))))).toBe("accept")
    expect(reason(verifyWrit(root))).toBe("accept")
  })
  it.each([
    ["received bytes over 4096", () => bytes(canonicalText(root).replace("{", "{" + " ".repeat(4100))), "too_large"],
    ["canonical bytes over 4096", () => writWith({ pad: "x".repeat(4096) }), "too_large"],
    ["nesting over 64", () => bytes(canonicalText(root).replace("{", `{"x":${"[".repeat(64)}${"]".repeat(64)},`)), "too_large"],
    ["nesting before number rules", () => bytes(canonicalText(root).replace("{", `{"x":${"[".repeat(64)}1.5${"]".repeat(64)},`)), "too_large"],
    ["a float", () => bytes(canonicalText(root).replace(`"exp":${EXP}`, `"exp":${EXP}.0`)), "noncanonical"],
    ["a duplicate member", () => bytes(canonicalText(root).replace("{", `{"v":1,`)), "noncanonical"],
    ["a lone surrogate", () => bytes(canonicalText(root).replace("{", `{"x":"\\ud800",`)), "noncanonical"],
    ["trailing data", () => bytes(canonicalText(root) + "{}"), "noncanonical"],
    ["not JSON", () => bytes("{"), "noncanonical"],
    ["not an object", () => bytes("[1]"), "malformed"],
    ["padded signature before the version", () => ({ ...root, v: 2, sig: (root.sig as string).slice(0, 84) + "==" }), "noncanonical"],
    ["non-canonical nnc", () => writWith({ nnc: "nonce00000000000000001" }), "noncanonical"],
    ["empty prv", () => writWith({ prv: "" }), "noncanonical"],
    ["v missing", () => writWith({ v: undefined }), "unsupported_version"],
    ["v a string", () => writWith({ v: "1" }), "unsupported_version"],
    ["typ call", () => writWith({ typ: "call" }), "wrong_type"],
    ["typ missing", () => writWith({ typ: undefined }), "wrong_type"],
    ["crit not an array", () => writWith({ crit: "exp" }), "malformed"],
    ["crit with a non-string", () => writWith({ crit: ["zap", 1] }), "malformed"],
    ["crit unknown name", () => writWith({ crit: ["zap", "nope"] }), "unsupported_critical"],
    ["crit names an absent member", () => writWith({ crit: ["zap"], zap: undefined, prv: undefined }), "unsupported_critical"],
    ["crit names an absent known member", () => writWith({ crit: ["prv"], prv: undefined }), "malformed"],
    ["iss missing", () => writWith({ iss: undefined }), "malformed"],
    ["iss a number", () => writWith({ iss: 5 }), "malformed"],
    ["iss did:web", () => writWith({ iss: "did:web:a.example" }), "bad_key"],
    ["hld bad key before a bad exp", () => writWith({ hld: "did:key:z6Mk", exp: "soon" }), "bad_key"],
    ["bnd missing", () => writWith({ bnd: undefined }), "malformed"],
    ["prv missing", () => writWith({ prv: undefined }), "malformed"],
    ["prv a short hash", () => writWith({ prv: "AAAA" }), "malformed"],
    ["exp a string", () => writWith({ exp: "1" }), "malformed"],
    ["nnc short", () => writWith({ nnc: "c2hvcnQ" }), "malformed"],
    ["nnc a number", () => writWith({ nnc: 7 }), "malformed"],
    ["sig missing", () => ({ ...root, sig: undefined }), "malformed"],
    ["sig short", () => ({ ...root, sig: (root.sig as string).slice(0, 80) }), "malformed"],
    ["tampered exp", () => ({ ...root, exp: EXP - 1 }), "bad_signature"],
    ["signed by another key", () => writWith({}, X), "bad_signature"]
  ])("%s", (_n, make, expected) => {
    const input = make() as JsonObject | Received
    if (!(input instanceof Received)) for (const k of Object.keys(input)) if ((input as Record<string, unknown>)[k] === undefined) delete (input as Record<string, unknown>)[k]
    expect(reason(verifyWrit(input))).toBe(expected)
  })
  // Section 1.7 and 6.1 step 4: a member named in `crit` must be present. Every understood member
  // but `crit` is required, so step 5 would refuse the same object later; the crit check is seen
  // by its place (step 4, before a bad key that step 5 would report) and its path.
  it.effect("crit naming an understood member that is absent is malformed at crit, before step 5", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(verifyWrit(writWith({ crit: ["nnc"], nnc: undefined, hld: "did:key:z6MkNOTAKEY" })))
      expect(e).toMatchObject({ reason: "malformed", path: "crit" })
      // Without crit the same writ fails at step 5 on its first bad member.
      const later = yield* Effect.flip(verifyWrit(writWith({ nnc: undefined, hld: "did:key:z6MkNOTAKEY" })))
      expect(later).toMatchObject({ reason: "bad_key", path: "hld" })
    }))
  it("unknown members are ignored but covered by the signature and the identity", () => {
    const extra = writWith({ note: "hi" })
    expect(reason(verifyWrit(extra))).toBe("accept")
    expect(identity(extra)).not.toBe(identity(root))
    expect(reason(verifyWrit({ ...extra, note: "bye" }))).toBe("bad_signature")
  })
})

describe("section 4: chains", () => {
  const twoLinks = [root, child]
  it("accepts the issued chain and checks expiry separately", () => {
    expect(reason(verifyChain(twoLinks))).toBe("accept")
    const chain = Effect.runSync(verifyChain(twoLinks))
    expect(reason(checkExpiry(chain, EXP - 101))).toBe("accept")
    expect(reason(checkExpiry(chain, EXP - 100))).toBe("expired")
  })
  it.each([
    ["not an array", () => root, "malformed"],
    ["empty", () => [], "malformed"],
    ["nine links, before any signature", () => Array(9).fill({ ...root, sig: "x" }), "too_large"],
    ["elements before writs", () => [{ ...root, v: 2 }, 5], "malformed"],
    ["a bad writ", () => [root, { ...child, exp: 1 }], "bad_signature"],
    ["root prv not null", () => [child], "chain_broken"],
    ["wrong order", () => [child, root], "chain_broken"],
    ["issuer not the parent's holder", () => [root, writWith({}, C, child)], "bad_signature"],
    ["issuer not the parent's holder, signed by it", () => [root, writWith({ iss: keyOf(C) }, C, child)], "chain_broken"],
    ["prv mismatch", () => [root, writWith({ prv: identity(child) }, B, child)], "chain_broken"],
    ["child outlives parent", () => [root, writWith({ exp: EXP + 1 }, B, child)], "not_narrowed"],
    ["child drops a bound", () => [root, writWith({ bnd: { ...(child.bnd as JsonObject), uses: undefined } }, B, child)], "not_narrowed"],
    ["child retypes a bound", () => [root, writWith({ bnd: { ...(child.bnd as JsonObject), uses: { t: "max", v: 1 } } }, B, child)], "not_narrowed"],
    ["child widens a set", () => [root, writWith({ bnd: { ...(child.bnd as JsonObject), currency: { t: "set", v: ["USD", "GBP"] } } }, B, child)], "not_narrowed"],
    ["child escapes act at a segment", () => [root, writWith({ bnd: { ...(child.bnd as JsonObject), act: { t: "prefix", v: "travelx" } } }, B, child)], "not_narrowed"]
  ])("%s", (_n, make, expected) => {
    const chain = JSON.parse(JSON.stringify(make()))
    expect(reason(verifyChain(chain))).toBe(expected)
  })
  it("hld and depth", () => {
    const rootH = writWith({ bnd: { ...(root.bnd as JsonObject), hld: { t: "set", v: [keyOf(X)] } } })
    const kid = writWith({ prv: identity(rootH) }, B, child)
    expect(reason(verifyChain([rootH, kid]))).toBe("not_narrowed")
    const rootD = writWith({ bnd: { ...(root.bnd as JsonObject), depth: { t: "max", v: 0 } } })
    const kidD = writWith({ prv: identity(rootD), bnd: { ...(child.bnd as JsonObject), depth: { t: "max", v: 0 } } }, B, child)
    expect(reason(verifyChain([rootD, kidD]))).toBe("not_narrowed")
    const rootD1 = writWith({ bnd: { ...(root.bnd as JsonObject), depth: { t: "max", v: 1 } } })
    const kidD1 = writWith({ prv: identity(rootD1), bnd: { ...(child.bnd as JsonObject), depth: { t: "max", v: 0 } } }, B, child)
    expect(reason(verifyChain([rootD1, kidD1]))).toBe("accept")
  })
})

describe("sections 5 and 7 steps 1 to 4 and 8: calls", () => {
  const callWith = (patch: Record<string, unknown>, signer = B): JsonObject => {
    const o: Record<string, unknown> = { ...callJson, ...patch }
    for (const k of Object.keys(patch)) if (patch[k] === undefined) delete o[k]
    return resign("call", o as JsonObject, signer)
  }
  const now = EXP - 1000
  it("accepts the issued call", () => expect(reason(verifyCall(callJson, { now }))).toBe("accept"))
  it.each([
    ["over 65536 bytes", () => callWith({ pad: "x".repeat(65536) }), "too_large"],
    ["id short, before the chain length", () => callWith({ id: "c2hvcnQ", chain: Array(9).fill(root) }), "malformed"],
    ["version before the chain length", () => callWith({ v: 3, chain: Array(9).fill(root) }), "unsupported_version"],
    ["nine links", () => callWith({ chain: Array(9).fill(root) }), "too_large"],
    ["empty chain", () => callWith({ chain: [] }), "malformed"],
    ["chain element not an object", () => callWith({ chain: [root, "x"] }), "malformed"],
    ["from not a key, before args", () => callWith({ from: "did:web:b", args: "none" }), "bad_key"],
    ["op missing", () => callWith({ op: undefined }), "malformed"],
    ["args not an object", () => callWith({ args: [] }), "malformed"],
    ["chain writs before the call signature", () => ({ ...callWith({ chain: [root, { ...child, exp: 5 }] }), sig: callJson.sig }), "bad_signature"],
    ["a tampered call", () => ({ ...callJson, op: "travel/charge/x" }), "bad_signature"],
    ["a broken chain", () => callWith({ chain: [child] }), "chain_broken"],
    ["from is the holder", () => callWith({ from: keyOf(C) }, C), "no_standing"],
    ["from is the root issuer", () => callWith({ from: keyOf(A) }, A), "no_standing"],
    ["op escapes act at a segment", () => callWith({ op: "travel/chargeback" }), "forbidden_op"],
    ["missing argument", () => callWith({ args: { amount: 1 } }), "missing_arg"],
    ["total over the leaf", () => callWith({ args: { ...w.args, spend: 100001 } }), "out_of_bounds"],
    ["currency not in the set", () => callWith({ args: { ...w.args, currency: "GBP" } }), "out_of_bounds"],
    ["standing call by a holder", () => callWith({ from: keyOf(C), op: "sys/undo" }, C), "no_standing"],
    ["standing call by a stranger to an undefined op", () => callWith({ from: keyOf(X), op: "sys/nope" }, X), "no_standing"],
    ["undefined standing op", () => callWith({ from: keyOf(A), op: "sys/nope" }, A), "forbidden_op"],
    ["standing call by the root issuer", () => callWith({ from: keyOf(A), op: "sys/undo", args: { tally: {} } }, A), "accept"]
  ])("%s", (_n, make, expected) => {
    expect(reason(verifyCall(JSON.parse(JSON.stringify(make())), { now }))).toBe(expected)
  })
  it.effect("crit naming an understood call member that is absent is malformed at crit, before step 5", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(verifyCall(callWith({ crit: ["args"], args: undefined, from: "did:key:z6MkNOTAKEY" })))
      expect(e).toMatchObject({ reason: "malformed", path: "crit" })
    }))
  it("expiry applies to forward calls only", () => {
    expect(reason(verifyCall(callJson, { now: EXP - 100 }))).toBe("expired")
    const standing = callWith({ from: keyOf(A), op: "sys/tallies", args: {} }, A)
    expect(reason(verifyCall(standing, { now: EXP + 10_000 }))).toBe("accept")
    expect(reason(verifyCall(callWith({ from: keyOf(C), op: "sys/tallies" }, C), { now: EXP + 10_000 }))).toBe("no_standing")
  })
})
