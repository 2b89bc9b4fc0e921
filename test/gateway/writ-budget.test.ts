// The gateway's Writ admission (src/gateway/writ-budget.ts) without a server: each refusal of
// section 7 steps 1 to 8 and of the call's binding to its request, in the spec's order, with its
// code and whether it is answered with a signed tally (after the signature verified) or unsigned.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { admitWrit, makeWritExecutor, requestDigest, TALLY_HEADER, refusalTally, writDraws, type WritExecutor, writRefusalOf, WRIT_POLICY } from "../../src/gateway/writ-budget.js"
import { decodeBase64url, encodeBase64url } from "../../src/kernel/base64url.js"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../../src/kernel/ed25519.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { delegate, holdChain, issueRoot } from "../../src/writ/issue.js"
import { canonicalBytes, signObject } from "../../src/writ/sign.js"
import { verifyTallyObject } from "../../src/writ/tally.js"
import { Received } from "../../src/writ/verify.js"

const seed = (n: number) => new Uint8Array(32).fill(n)
const didOf = (s: Uint8Array) => didKeyFromPublicKey(publicKeyFromSeed(s))
const A = seed(1), B = seed(2), G = seed(9), OTHER = seed(5)
const NOW = 1_800_000_000
const exec = makeWritExecutor({ seed: G, roots: [didOf(A)] })
const body = new TextEncoder().encode(JSON.stringify({ model: "gpt-4o-mini", messages: [] }))
const request = { route: "openai.chat" as const, model: "gpt-4o-mini", body }
const as = <X>(s: Uint8Array, eff: Effect.Effect<X, unknown, Signer | RandomBytes>) => Effect.provide(eff, Layer.merge(Signer.fromSeed(s), RandomBytes.live))

/** A chain A -> B -> `leafHolder` with `bnd` on the root, and a call signed by B with `args` over it. */
const callHeader = (o: { readonly leafHolder?: string; readonly bnd?: Record<string, unknown>; readonly op?: string; readonly args?: Record<string, unknown> } = {}) =>
  Effect.gen(function*() {
    const root = yield* as(A, issueRoot({ hld: didOf(B), exp: NOW + 3600, bnd: { act: { t: "prefix", v: "llm" }, usd: { t: "total", v: 1000 }, ...o.bnd } as never }))
    const leaf = yield* as(B, Effect.flatMap(holdChain(root.chainJson), (h) => delegate(h, { hld: o.leafHolder ?? exec.did })))
    const args: JsonObject = { model: "gpt-4o-mini", usd: 1000, req: requestDigest(body), ...o.args } as JsonObject
    const call = yield* as(B, Effect.gen(function*() {
      const id = encodeBase64url(yield* (yield* RandomBytes).bytes(16))
      return yield* signObject({ v: 1, typ: "call", id, chain: leaf.chainJson, from: didOf(B), op: o.op ?? "llm/openai.chat", args })
    }))
    return encodeBase64url(canonicalBytes(call))
  })

/** The refusal of `header` by `by` (a StoreError would be a defect here: no store is asked). */
const refusedBy = (by: WritExecutor, header: string) =>
  Effect.flip(admitWrit(by, header, request, NOW)).pipe(Effect.flatMap((e) => (e._tag === "WritRefused" ? Effect.succeed(e) : Effect.die(e))))
const refusedWith = (header: string) => refusedBy(exec, header)

describe("the gateway's Writ admission", () => {
  it.effect("admits a call bound to its request, with the chain's totals as draws", () =>
    Effect.gen(function*() {
      const a = yield* admitWrit(exec, yield* callHeader(), request, NOW)
      expect(a.cap).toBe(1000n)
      expect(a.totals.map((t) => t.limit)).toEqual([1000n, 1000n])
      const draws = writDraws(a, 7n)
      expect(draws.map((d) => d.measure)).toEqual(["dedup", "usd", "usd"])
      expect(draws.filter((d) => d.measure === "usd").every((d) => d.amount === 7000n && d.limit === 1_000_000n)).toBe(true)
    }))

  it.effect("steps 1 and 2 are unsigned: a header that is not base64url, a call altered after signing", () =>
    Effect.gen(function*() {
      const notB64 = yield* refusedWith("not base64url!")
      expect([notB64.code, notB64.basis]).toEqual(["malformed", undefined])
      const call = JSON.parse(new TextDecoder().decode(Option.getOrThrow(decodeBase64url(yield* callHeader()))))
      call.args.usd = 999
      const altered = yield* refusedWith(encodeBase64url(canonicalBytes(call)))
      expect([altered.code, altered.basis]).toEqual(["bad_signature", undefined])
    }))

  it.effect("later refusals carry a basis, and their failed tally verifies under the gateway's key", () =>
    Effect.gen(function*() {
      const e = yield* refusedWith(yield* callHeader({ leafHolder: didOf(OTHER) }))
      expect(e.code).toBe("wrong_executor")
      const tally = refusalTally(exec, e.basis, e.code)[TALLY_HEADER]
      const checked = yield* verifyTallyObject(new Received(Option.getOrThrow(decodeBase64url(tally))), exec.did)
      expect(checked.value).toMatchObject({ st: "failed", err: { code: "wrong_executor" } })
    }))

  it.effect("each later step's code", () =>
    Effect.gen(function*() {
      expect((yield* refusedWith(yield* callHeader({ op: "sys/tallies" }))).code).toBe("forbidden_op")
      expect((yield* refusedWith(yield* callHeader({ op: "llm/openai.responses" }))).code).toBe("gateway/writ_mismatch")
      expect((yield* refusedWith(yield* callHeader({ op: "travel/book", bnd: { act: { t: "prefix", v: "llm" } } }))).code).toBe("forbidden_op")
      expect((yield* refusedWith(yield* callHeader({ args: { model: "gpt-4o" } }))).code).toBe("gateway/writ_mismatch")
      expect((yield* refusedWith(yield* callHeader({ args: { req: "x".repeat(43) } }))).code).toBe("gateway/writ_mismatch")
      expect((yield* refusedWith(yield* callHeader({ args: { usd: 1001 } }))).code).toBe("out_of_bounds")
      expect((yield* refusedWith(yield* callHeader({ bnd: { usd: { t: "max", v: 5000 } }, args: { usd: "lots" } }))).code).toBe("out_of_bounds")
      expect((yield* refusedWith(yield* callHeader({ bnd: { currency: { t: "set", v: ["USD"] } } }))).code).toBe("missing_arg")
    }))

  it.effect("a call with no usd argument under a chain without a usd bound is missing_arg", () =>
    Effect.gen(function*() {
      const root = yield* as(A, issueRoot({ hld: didOf(B), exp: NOW + 3600, bnd: { act: { t: "prefix", v: "llm" } } as never }))
      const leaf = yield* as(B, Effect.flatMap(holdChain(root.chainJson), (h) => delegate(h, { hld: exec.did })))
      const call = yield* as(B, signObject({ v: 1, typ: "call", id: "A".repeat(22), chain: leaf.chainJson, from: didOf(B), op: "llm/openai.chat", args: { model: "gpt-4o-mini", req: requestDigest(body) } }))
      expect((yield* refusedWith(encodeBase64url(canonicalBytes(call)))).code).toBe("missing_arg")
    }))

  it.effect("revocation is asked of the configured store, by the chain's identities and issuers", () =>
    Effect.gen(function*() {
      let asked: ReadonlyArray<string> = []
      const revoking = makeWritExecutor({ seed: G, roots: [didOf(A)], revoked: (writs, issuers) => Effect.sync(() => { asked = issuers; return writs.length === 2 }) })
      const e = yield* refusedBy(revoking, yield* callHeader())
      expect(e.code).toBe("revoked")
      expect(asked).toEqual([didOf(A), didOf(B)])
    }))

  it("the guard's refusals on a Writ draw map to their codes; another level's to none", () => {
    expect(writRefusalOf(WRIT_POLICY.total)?.code).toBe("total_exhausted")
    expect(writRefusalOf(WRIT_POLICY.count)?.code).toBe("count_exhausted")
    expect(writRefusalOf(WRIT_POLICY.replay)?.code).toBe("gateway/writ_replayed")
    expect(writRefusalOf("gateway:key")).toBeUndefined()
  })
})
