// The plain replay path in front of the route (src/bind/writ-http/fast-path.ts, replays.ts
// `replayNow`): once the replay audit allowance is spent, replays are answered without an Effect,
// byte for byte; a revoke recorded after them refuses the next replay (section 7 step 7 before 9).
// (That replay may take either path: the allowance refills on the wall clock meanwhile.)
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { postWrit } from "../../src/bind/writ-http/client.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import type { Outcome } from "../../src/writ/executor/services.js"
import { serveScoped } from "./inproc.js"
import { call, key, prefix, revoke, writ } from "./support.js"

const A = key(61)
const E = key(62)
const app = { perform: (): Effect.Effect<Outcome> => Effect.succeed({ st: "ok", res: { done: true } }) }
const tallyOf = (a: { json: Option.Option<Json> }) => (Option.getOrNull(a.json) as { tally: JsonObject }).tally

describe("replays answered by plain code", () => {
  it.scopedLive("are answered byte for byte, and refused `revoked` once the writ is revoked", () =>
    Effect.gen(function*() {
      const srv = yield* serveScoped({ executorKey: E, roots: [A], app, act: ["t/"] })
      const chain = [writ(A, E, { act: prefix("t/") })]
      const c = call(A, chain, "t/ok")
      const first = yield* postWrit(srv.url, c)
      expect(tallyOf(first).st).toBe("ok")
      // Past the replay audit allowance (100 at once): the later replays take the plain path.
      // Sent 16 at a time, faster than the allowance refills (10 a second).
      const again = yield* Effect.forEach(Array.from({ length: 400 }), () => postWrit(srv.url, c), { concurrency: 16 })
      expect(again.every((a) => Buffer.from(a.bytes).equals(Buffer.from(first.bytes)))).toBe(true)
      const rv = yield* postWrit(srv.url, revoke(A, chain))
      expect(rv.status).toBe(200)
      const after = yield* postWrit(srv.url, c)
      expect([tallyOf(after).st, (tallyOf(after).err as { code: string }).code]).toEqual(["failed", "revoked"])
    }))
})
