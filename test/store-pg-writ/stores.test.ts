// Every store of section 9 on PostgreSQL, with the cases the memory and SQLite stores pass
// (test/writ-executor/stores-cases.ts): a committed write survives a restart (a new pool and a new
// worker on the same schema), and a step that fails after writing leaves nothing. One schema per
// case, since the cases write fixed keys.
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { afterAll } from "vitest"
import { Atomic } from "../../src/accounting/reservations.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { cases } from "../writ-executor/stores-cases.js"
import { injected } from "../writ-executor/stores-support.js"
import { dropSchema, openStores, pgReachable, uniqueSchema } from "./support.js"

const up = await pgReachable()
const schemas: Array<string> = []
afterAll(async () => {
  if (up) for (const s of schemas) await dropSchema(s)
})
const fresh = () => {
  const s = uniqueSchema("wstores")
  schemas.push(s)
  return s
}
const open = (schema: string) =>
  Effect.map(openStores(schema), (o) => ({ ...o, context: o.context as unknown as Context.Context<StoreContext> }))

describe.skipIf(!up)("writ stores on PostgreSQL", () => {
  for (const c of cases) {
    it.live(`${c.name}: a committed write survives a restart`, () =>
      Effect.gen(function*() {
        const schema = fresh()
        const first = yield* open(schema)
        yield* Effect.provide(Context.get(first.context, Atomic).transaction(c.write), first.context)
        yield* first.close
        const again = yield* open(schema)
        expect(yield* Effect.provide(c.read, again.context)).toEqual(c.expected)
        yield* again.close
      }).pipe(Effect.orDie), 60_000)

    it.live(`${c.name}: a step that fails after writing leaves nothing`, () =>
      Effect.gen(function*() {
        const schema = fresh()
        const s = yield* open(schema)
        const before = yield* Effect.provide(c.read, s.context)
        expect(before).not.toEqual(c.expected)
        const failed = yield* Effect.provide(
          Context.get(s.context, Atomic).transaction(Effect.zipRight(c.write, injected("test.after-write"))),
          s.context
        ).pipe(Effect.flip)
        expect((failed as { _tag: string })._tag).toBe("StoreError")
        expect(yield* Effect.provide(c.read, s.context)).toEqual(before)
        yield* s.close
        const again = yield* open(schema)
        expect(yield* Effect.provide(c.read, again.context)).toEqual(before)
        yield* again.close
      }).pipe(Effect.orDie), 60_000)
  }
})
