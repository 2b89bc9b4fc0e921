// `npx tsx scripts/trace.ts`: one Writ forward call verified twice (section 7 steps 1 to 4 and 8,
// `verifyCall`) under an OpenTelemetry tracer, printed as a span tree with each span's attributes.
// The first run decodes every key and checks every signature; the second finds them in the
// VerificationCache. Keys come from fixed seeds and the verifier's `now` is fixed, so only the
// durations change between runs (spans are timed by the live clock).
import { NodeSdk } from "@effect/opentelemetry"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer } from "effect"
import { RandomBytes, Signer } from "../src/kernel/services.js"
import { VerificationCache } from "../src/kernel/verification-cache.js"
import { didKeyFromPublicKey } from "../src/kernel/didkey.js"
import { publicKeyFromSeed } from "../src/kernel/ed25519.js"
import { verifyCall } from "../src/writ/call.js"
import { delegate, holdChain, issueRoot, makeCall } from "../src/writ/issue.js"

const NOW = 1_788_400_000
const seed = (n: number) => new Uint8Array(32).fill(n)
const did = (n: number) => didKeyFromPublicKey(publicKeyFromSeed(seed(n)))
const as = (n: number) => <A, E>(e: Effect.Effect<A, E, Signer | RandomBytes>) =>
  Effect.provide(e, Layer.merge(Signer.fromSeed(seed(n)), RandomBytes.seeded(Uint8Array.of(n))))

const program = Effect.gen(function* () {
  // A (root issuer) -> B -> C, then B calls under the chain.
  const root = yield* as(1)(issueRoot({ hld: did(2), bnd: { act: { t: "prefix", v: "travel" }, amount: { t: "max", v: 60000 } }, exp: NOW + 3600 }))
  const held = yield* as(2)(holdChain(root.chain))
  const child = yield* as(2)(delegate(held, { hld: did(3), exp: NOW + 1800, bnd: { act: { t: "prefix", v: "travel/charge" }, amount: { t: "max", v: 500 } } }))
  const call = yield* as(2)(makeCall({ chain: child.chain, op: "travel/charge", args: { amount: 400 } }))
  const cache = VerificationCache.make({ maxBytes: 1 << 20 })
  const verify = Effect.provideService(verifyCall(call.call.json, { now: NOW }), VerificationCache, cache)
  yield* verify.pipe(Effect.withSpan("first call (cold cache)"))
  yield* verify.pipe(Effect.withSpan("same call again (warm cache)"))
})

const exporter = new InMemorySpanExporter()
const tracing = NodeSdk.layer(() => ({ resource: { serviceName: "mandate" }, spanProcessor: new SimpleSpanProcessor(exporter) }))

// The exporter forgets its spans when the tracer shuts down with the Layer: read them before.
const spans = await Effect.runPromise(
  Effect.gen(function* () {
    yield* program
    return [...exporter.getFinishedSpans()]
  }).pipe(Effect.provide(tracing))
)
const byParent = new Map<string | undefined, Array<ReadableSpan>>()
for (const s of spans) {
  const parent = s.parentSpanContext?.spanId
  const key = parent !== undefined && spans.some((p) => p.spanContext().spanId === parent) ? parent : undefined
  byParent.set(key, [...(byParent.get(key) ?? []), s])
}
const ms = (s: ReadableSpan) => (s.duration[0] * 1e3 + s.duration[1] / 1e6).toFixed(2)
const attrs = (s: ReadableSpan) =>
  Object.entries(s.attributes)
    .filter(([k]) => k.startsWith("writ."))
    .map(([k, v]) => `${k}=${String(v).length > 16 ? String(v).slice(0, 12) + "..." : String(v)}`)
    .join(" ")
const print = (parent: string | undefined, depth: number): void => {
  const children = (byParent.get(parent) ?? []).sort((a, b) => (a.startTime[0] - b.startTime[0]) || (a.startTime[1] - b.startTime[1]))
  for (const s of children) {
    console.log(`${"  ".repeat(depth)}${s.name}  ${ms(s)} ms  ${attrs(s)}`.trimEnd())
    print(s.spanContext().spanId, depth + 1)
  }
}
// The two calls only (issuing the objects above verifies them too, in spans of their own).
for (const root of byParent.get(undefined) ?? []) {
  if (!root.name.endsWith("cache)")) continue
  console.log(`${root.name}  ${ms(root)} ms`)
  print(root.spanContext().spanId, 1)
}
