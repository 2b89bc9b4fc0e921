// Refusals built without a stack (src/kernel/stackless.ts): each refusal class keeps its tag,
// fields, Schema encoding and decoding, equality and catchTags exactly as the same class built
// without Stackless, and captures no stack frame; the twin without it does (so the check can fail).
// Error.stackTraceLimit is restored after every construction, a refused one (invalid fields) too.
import { describe, expect, it } from "@effect/vitest"
import { Data, Effect, Equal, Hash, Schema } from "effect"
import { Stackless } from "../../src/kernel/stackless.js"
import { WritError, WritReason, writError } from "../../src/writ/reason.js"
import { SignedRefusal, UnsignedError } from "../../src/writ/executor/failures.js"
import { ExecutorCode } from "../../src/writ/executor/services.js"
import { YeaError, yeaError } from "../../src/yea/reason.js"
import { LimitExhausted } from "../../src/accounting/reservations.js"
import { CaveatsForbidden } from "../../src/yea/caveat.js"
import { Denied } from "../../src/yea/approval/reason.js"

/** The same schema as src/writ/reason.ts's WritError, with the stack: the behaviour before. */
class WritErrorWithStack extends Schema.TaggedError<WritErrorWithStack>()("WritError", {
  reason: WritReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}

class SignedRefusalWithStack extends Schema.TaggedError<SignedRefusalWithStack>()("SignedRefusal", {
  reason: ExecutorCode
}) {}

/** Frames in an error's stack: the lines after its `Name: message` header. */
const frames = (e: unknown): number => String((e as Error).stack).split("\n").filter((l) => /^\s+at /.test(l)).length

/** Built a few calls deep, so a captured stack would have frames whatever the runner's depth. */
const deep = <A>(n: number, f: () => A): A => (n === 0 ? f() : deep(n - 1, f))

describe("Stackless refusals", () => {
  it("WritError: same tag, fields, encoding and equality as the class with a stack; no frames", () => {
    const props = { reason: "expired", path: "chain[0].exp", message: "the writ expired" } as const
    const a = deep(5, () => new WritError(props))
    const b = deep(5, () => new WritErrorWithStack(props))
    expect(frames(b)).toBeGreaterThan(0)
    expect(frames(a)).toBe(0)
    expect(a.stack).toBe("WritError: the writ expired")
    expect(a).toBeInstanceOf(WritError)
    expect(a).toBeInstanceOf(Error)
    expect(a._tag).toBe(b._tag)
    expect(a.name).toBe(b.name)
    expect(a.message).toBe(b.message)
    expect({ ...a }).toEqual({ ...b })
    expect(Object.keys(a)).toEqual(Object.keys(b))
    expect(Schema.encodeSync(WritError)(a)).toEqual(Schema.encodeSync(WritErrorWithStack)(b))
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    const decoded = Schema.decodeUnknownSync(WritError)(Schema.encodeSync(WritError)(a))
    expect(decoded).toBeInstanceOf(WritError)
    expect(frames(decoded)).toBe(0)
    expect(Equal.equals(a, decoded)).toBe(true)
    expect(Hash.hash(a)).toBe(Hash.hash(decoded))
    expect(Equal.equals(a, writError("expired", "chain[0].exp", "the writ expired"))).toBe(true)
    expect(Equal.equals(a, writError("revoked", "chain[0].exp", "the writ expired"))).toBe(false)
    expect(Schema.is(WritError)(a)).toBe(true)
    // Effect recognises a class by its identifier's symbol, so the twin passes too, as before.
    expect(Schema.is(WritError)(b)).toBe(true)
  })

  it("SignedRefusal and UnsignedError: the executor's refusals keep their encoding, no frames", () => {
    const a = deep(5, () => new SignedRefusal({ reason: "count_exhausted" }))
    const b = deep(5, () => new SignedRefusalWithStack({ reason: "count_exhausted" }))
    expect(frames(b)).toBeGreaterThan(0)
    expect(frames(a)).toBe(0)
    expect(Schema.encodeSync(SignedRefusal)(a)).toEqual(Schema.encodeSync(SignedRefusalWithStack)(b))
    expect(Schema.encodeSync(SignedRefusal)(a)).toEqual({ _tag: "SignedRefusal", reason: "count_exhausted" })
    expect(a.message).toBe(b.message)
    const u = deep(5, () => new UnsignedError({ reason: "bad_signature", op: "travel/book" }))
    expect(frames(u)).toBe(0)
    expect(Schema.encodeSync(UnsignedError)(u)).toEqual({ _tag: "UnsignedError", reason: "bad_signature", op: "travel/book" })
  })

  it("YEA, accounting and caveat refusals: no frames, fields as given", () => {
    const y = deep(5, () => yeaError("forbidden", "no", { path: "params.amount", retry: 3 }))
    expect(frames(y)).toBe(0)
    expect(y).toBeInstanceOf(YeaError)
    expect(Schema.encodeSync(YeaError)(y)).toEqual({ _tag: "YeaError", reason: "forbidden", message: "no", path: "params.amount", retry: 3 })
    const l = deep(5, () => new LimitExhausted({ key: "k", limit: 10n, used: 9n, amount: 2n }))
    expect(frames(l)).toBe(0)
    expect(Schema.encodeSync(LimitExhausted)(l)).toEqual({ _tag: "LimitExhausted", key: "k", limit: 10n, used: 9n, amount: 2n })
    const c = deep(5, () => new CaveatsForbidden({ failures: [], message: "m" }))
    expect(frames(c)).toBe(0)
    expect(c._tag).toBe("CaveatsForbidden")
    expect(Equal.equals(c, new CaveatsForbidden({ failures: [], message: "m" }))).toBe(false) // arrays compare by reference, as Data's do
    const failures: ReadonlyArray<never> = []
    expect(Equal.equals(new CaveatsForbidden({ failures, message: "m" }), new CaveatsForbidden({ failures, message: "m" }))).toBe(true)
    const d = deep(5, () => new Denied({ code: "denied", why: "policy" }))
    expect(frames(d)).toBe(0)
    expect(Schema.encodeSync(Denied)(d)).toEqual({ _tag: "Denied", code: "denied", why: "policy" })
  })

  it.effect("catchTags still routes each refusal by its tag", () =>
    Effect.gen(function*() {
      const fail = (n: number): Effect.Effect<never, WritError | SignedRefusal> =>
        n === 0 ? Effect.fail(writError("revoked", undefined, "r")) : Effect.fail(new SignedRefusal({ reason: "total_exhausted" }))
      const route = (n: number) =>
        fail(n).pipe(Effect.catchTags({ WritError: (e) => Effect.succeed(`writ:${e.reason}`), SignedRefusal: (e) => Effect.succeed(`signed:${e.reason}`) }))
      expect(yield* route(0)).toBe("writ:revoked")
      expect(yield* route(1)).toBe("signed:total_exhausted")
    }))

  it("restores Error.stackTraceLimit after a construction, and after a refused one", () => {
    const before = Error.stackTraceLimit
    new WritError({ reason: "malformed", message: "m" })
    expect(Error.stackTraceLimit).toBe(before)
    // An invalid reason is refused by the class's Schema, as before; the limit is restored.
    expect(() => new WritError({ reason: "no_such_code" as never, message: "m" })).toThrow()
    expect(Error.stackTraceLimit).toBe(before)
    expect(frames(new Error("after"))).toBeGreaterThan(0)
  })

  it("wraps Data.TaggedError classes as well", () => {
    class Plain extends Data.TaggedError("Plain")<{ readonly n: number }> {}
    class Quiet extends Stackless(Data.TaggedError("Plain")<{ readonly n: number }>) {}
    const p = deep(5, () => new Plain({ n: 1 }))
    const q = deep(5, () => new Quiet({ n: 1 }))
    expect(frames(p)).toBeGreaterThan(0)
    expect(frames(q)).toBe(0)
    expect({ ...q }).toEqual({ ...p })
    expect(q.n).toBe(1)
    expect(Equal.equals(q, new Quiet({ n: 1 }))).toBe(true)
    expect(Equal.equals(q, new Quiet({ n: 2 }))).toBe(false)
  })
})
