// `writ a2a-serve` takes a handler whose `perform` returns an Effect, the outcome, or a Promise of
// it (src/app/writ-a2a-serve.ts); a throw or a rejection is `failed` with `unknown_outcome`.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { acceptPlainHandler } from "../../src/app/writ-a2a-serve.js"
import type { ApplicationService, Operation, Outcome } from "../../src/writ/executor/services.js"

const op = { kind: "forward", callId: "c", op: "x/y", args: {} } as unknown as Operation
const ok: Outcome = { st: "ok", res: { n: 1 } }
const plain = (perform: (o: Operation) => unknown) => acceptPlainHandler({ perform } as unknown as ApplicationService)

describe("a2a-serve's handler forms", () => {
  it.effect("an Effect, a plain outcome and a Promise give the same outcome", () =>
    Effect.gen(function*() {
      expect(yield* plain(() => Effect.succeed(ok)).perform(op)).toEqual(ok)
      expect(yield* plain(() => ok).perform(op)).toEqual(ok)
      expect(yield* plain(async () => ok).perform(op)).toEqual(ok)
    }))
  it.effect("a throw or a rejected Promise is failed with unknown_outcome (the handler may have acted)", () =>
    Effect.gen(function*() {
      const failed = { st: "failed", code: "unknown_outcome" }
      expect(yield* plain(() => { throw new Error("boom") }).perform(op)).toEqual(failed)
      expect(yield* plain(() => Promise.reject(new Error("boom"))).perform(op)).toEqual(failed)
    }))
})
