// `npm run bench -- refusal [--ms=N] [--rounds=N]`: what a refusal costs.
//
//   build    the refusal classes (WritError, SignedRefusal, YeaError) as the code builds them,
//            beside a twin of each declared here with the same Schema and no Stackless
//            (src/kernel/stackless.ts), so with the stack capture every Error pays: us per
//            construction, built 20 calls deep as on the executor's path; the ratio is twin / ours.
//   refused  a refused call: a forward call under a chain the VerificationCache holds, verified
//            with `verifyCall` after the chain's expiry (section 7 step 4: `expired`), so it costs
//            its own signature and a WritError; beside raw node:crypto Ed25519 verifies in the
//            same run (1.0 would mean the refusal costs nothing but the signature).
// Last line: `refusal: build WritError X us (R x with stack) ...; refused call R of raw Ed25519`.
import { createPublicKey, verify as nodeVerify } from "node:crypto"
import { rate } from "./_rate.js"
import { Effect, Either, Schema } from "effect"
import { call, canon, child, key, signingInput, writ, type Obj } from "../../test/support/writ-builders.js"
import { verifyCall } from "../../src/writ/call.js"
import { Received } from "../../src/writ/verify.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../src/kernel/verification-cache.js"
import { WritError, WritReason } from "../../src/writ/reason.js"
import { SignedRefusal } from "../../src/writ/executor/failures.js"
import { ExecutorCode } from "../../src/writ/executor/services.js"
import { ConsentRequest, YeaError, YeaReason } from "../../src/yea/reason.js"

class WritErrorWithStack extends Schema.TaggedError<WritErrorWithStack>()("WritError", {
  reason: WritReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}
class SignedRefusalWithStack extends Schema.TaggedError<SignedRefusalWithStack>()("SignedRefusal", { reason: ExecutorCode }) {}
class YeaErrorWithStack extends Schema.TaggedError<YeaErrorWithStack>()("YeaError", {
  reason: YeaReason,
  message: Schema.String,
  path: Schema.optional(Schema.String),
  need: Schema.optional(Schema.Array(Schema.Unknown)),
  consent: Schema.optional(ConsentRequest),
  fix: Schema.optional(Schema.Array(Schema.Struct({ say: Schema.String, params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }))),
  retry: Schema.optional(Schema.Int)
}) {}

const deep = <A>(n: number, f: () => A): A => (n === 0 ? f() : deep(n - 1, f))

/** Operations per second of `op` (the shared micro-benchmark loop). */
const perSecond = (ms: number, op: (i: number) => void, limit?: number): number => rate(ms, op, limit).perSecond

const KEYS = Array.from({ length: 3 }, (_, i) => key(`bench-refusal${i}`))
const EXP = 1_900_000_000
const BND: Obj = { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 } }

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const msArg = args.find((a) => a.startsWith("--ms="))
  const roundsArg = args.find((a) => a.startsWith("--rounds="))
  const ms = msArg === undefined ? 300 : Number(msArg.slice(5))
  const rounds = roundsArg === undefined ? 3 : Number(roundsArg.slice(9))

  const builds: ReadonlyArray<readonly [string, () => unknown, () => unknown]> = [
    ["WritError", () => new WritError({ reason: "expired", path: "chain[0].exp", message: "expired" }), () => new WritErrorWithStack({ reason: "expired", path: "chain[0].exp", message: "expired" })],
    ["SignedRefusal", () => new SignedRefusal({ reason: "count_exhausted" }), () => new SignedRefusalWithStack({ reason: "count_exhausted" })],
    ["YeaError", () => new YeaError({ reason: "forbidden", message: "no" }), () => new YeaErrorWithStack({ reason: "forbidden", message: "no" })]
  ]

  // One held chain of 2 writs, each call signed by its leaf issuer (section 5); calls refused at step 4 once `now` is past its expiry.
  const root = writ("bench/refusal/0", { iss: KEYS[0], hld: KEYS[1].did, bnd: BND, exp: EXP })
  const chain = [root, child("bench/refusal/1", root, KEYS[1], KEYS[2].did, { amount: { t: "max", v: 500 } })]
  const callOf = (label: string) => Buffer.from(canon(call(label, KEYS[1], chain, "travel/book", { amount: 100 })), "utf8")
  const cache = VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES })
  const verifyAt = (bytes: Uint8Array, now: number) =>
    Effect.runSync(Effect.either(Effect.provideService(verifyCall(new Received(bytes), { now }), VerificationCache, cache)))
  for (const i of [0, 1]) {
    const w = verifyAt(callOf(`bench/refusal/warm/${i}`), EXP - 7200)
    if (Either.isLeft(w)) throw new Error(`the warm-up call must verify: ${w.left.reason} ${w.left.message}`)
  }
  const pool = Array.from({ length: rounds }, (_, r) => Array.from({ length: 3000 }, (_, c) => callOf(`bench/refusal/${r}/${c}`)))
  const refused = (bytes: Uint8Array) => {
    const r = verifyAt(bytes, EXP + 10)
    if (Either.isRight(r) || r.left.reason !== "expired") throw new Error("the call must be refused as expired")
  }
  refused(pool[0][0])

  const { sig, ...rest } = root
  const msg = signingInput("writ", rest)
  const sigBytes = Buffer.from(String(sig), "base64url")
  const pub = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), KEYS[0].pub]), format: "der", type: "spki" })
  const raw = () => perSecond(ms, () => void nodeVerify(null, msg, pub, sigBytes))

  // Warm the JIT on every path before any measurement.
  for (const [, ours, twin] of builds) for (let i = 0; i < 20_000; i++) { deep(20, ours); deep(20, twin) }
  for (let i = 0; i < 200; i++) refused(callOf(`bench/refusal/jit/${i}`))

  const best = { ours: new Map<string, number>(), twin: new Map<string, number>(), refused: 0, raw: 0 }
  const keep = (m: Map<string, number>, k: string, v: number) => m.set(k, Math.max(m.get(k) ?? 0, v))
  for (let r = 0; r < rounds; r++) {
    best.raw = Math.max(best.raw, raw())
    for (const [name, ours, twin] of builds) {
      keep(best.ours, name, perSecond(ms, () => deep(20, ours)))
      keep(best.twin, name, perSecond(ms, () => deep(20, twin)))
    }
    best.refused = Math.max(best.refused, perSecond(ms, (i) => refused(pool[r][i]), pool[r].length))
    best.raw = Math.max(best.raw, raw())
  }
  const us = (perSecond: number) => 1e6 / perSecond
  console.log(`class            ours us   with stack us   ratio (best of ${rounds} rounds of ${ms} ms, built 20 calls deep)`)
  for (const [name] of builds) {
    const o = us(best.ours.get(name)!)
    const t = us(best.twin.get(name)!)
    console.log(`${name.padEnd(14)} ${o.toFixed(2).padStart(8)} ${t.toFixed(2).padStart(15)} ${(t / o).toFixed(2).padStart(8)}`)
  }
  console.log(`raw node:crypto Ed25519 verify: ${best.raw.toFixed(0)} /s; refused calls (expired, held chain, verifyCall): ${best.refused.toFixed(0)} /s`)
  const parts = builds.map(([name]) => `${name} ${us(best.ours.get(name)!).toFixed(2)} us (${(us(best.twin.get(name)!) / us(best.ours.get(name)!)).toFixed(1)} x faster than with stack)`)
  console.log(`refusal: build ${parts.join(", ")}; refused call ${(best.refused / best.raw).toFixed(2)} of raw Ed25519`)
}
