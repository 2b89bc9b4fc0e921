// Every store of section 9, on both Layers: what a committed write leaves survives a restart
// (memory: the same instance; SQLite: a new connection to the same file), and a write inside an
// atomic step that then fails leaves nothing behind (fault injection: no half-state).
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { Atomic } from "../../src/accounting/reservations.js"
import { type Case, cases } from "./stores-cases.js"
import { injected, kinds, openDurable } from "./stores-support.js"

const emptyRead = (kind: "memory" | "sqlite", c: Case) =>
  Effect.scoped(Effect.gen(function*() {
    const d = yield* openDurable(kind)
    return yield* Effect.provide(c.read, d.context())
  }))

for (const kind of kinds) {
  describe(`writ stores on ${kind}`, () => {
    for (const c of cases) {
      it.scoped(`${c.name}: a committed write survives a restart`, () =>
        Effect.gen(function*() {
          const d = yield* openDurable(kind)
          const atomic = Context.get(d.context(), Atomic)
          yield* Effect.provide(atomic.transaction(c.write), d.context())
          const reopened = yield* d.reopen
          expect(yield* Effect.provide(c.read, reopened)).toEqual(c.expected)
        }))

      it.scoped(`${c.name}: a step that fails after writing leaves nothing`, () =>
        Effect.gen(function*() {
          const before = yield* emptyRead(kind, c)
          expect(before).not.toEqual(c.expected)
          const d = yield* openDurable(kind)
          const atomic = Context.get(d.context(), Atomic)
          const failed = yield* Effect.provide(
            atomic.transaction(Effect.zipRight(c.write, injected("test.after-write"))),
            d.context()
          ).pipe(Effect.flip)
          expect((failed as { _tag: string })._tag).toBe("StoreError")
          expect(yield* Effect.provide(c.read, d.context())).toEqual(before)
          const reopened = yield* d.reopen
          expect(yield* Effect.provide(c.read, reopened)).toEqual(before)
        }))
    }
  })
}
