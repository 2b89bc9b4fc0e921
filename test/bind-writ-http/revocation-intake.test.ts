// Revocation cannot be starved. The revoke allowance is charged after the revoke
// has verified (section 9.1 steps 1 to 4), and a revoke signed by a known principal (a root the
// executor accepts, or an issuer of a chain rooted at one) draws on an allowance of its own, so
// neither junk that does not verify nor valid revokes signed by fresh keys, sent from the victim's
// own address, keep the victim's genuine revoke out. On an injected clock that never moves.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { postWrit } from "../../src/bind/writ-http/client.js"
import { RevokeRateLimit } from "../../src/bind/writ-http/rate-limit.js"
import type { Json, JsonObject } from "../../src/kernel/json.js"
import { serveScoped, settableClock } from "./inproc.js"
import { call, key, prefix, revoke, writ } from "./support.js"

const A = key(41) // root issuer, accepted
const B = key(42) // holds a writ from A and issues below it
const E = key(43) // the executor

const app = { perform: () => Effect.succeed({ st: "ok" as const }) }

const jsonOf = (a: { json: Option.Option<Json> }) => Option.getOrThrow(a.json) as JsonObject

describe("revocation intake (section 12)", () => {
  it.scopedLive("revocation is not starved by junk revokes from the victim's address", () => Effect.gen(function*() {
    const srv = yield* serveScoped({
      executorKey: E, roots: [A], app, act: ["t/"], rate: { burst: 3, perSecond: 1 }, rateClock: settableClock().clock
    })
    const post = (body: JsonObject) => postWrit(srv.url, body, {})
    const w1 = writ(A, B, { act: prefix("t/") })
    const w2 = writ(B, E, { act: prefix("t/") }, w1)
    // Junk that does not verify, as much as the attacker likes: refused, and charged nothing.
    for (let i = 0; i < 20; i++) {
      const junk = yield* post({ ...revoke(A, [w1, w2]), sig: revoke(key(100 + i), []).sig })
      expect(junk.status).toBe(400)
    }
    // Valid revokes signed by fresh keys (any key may withdraw itself) use up the general allowance.
    const fresh = []
    for (let i = 0; i < 10; i++) fresh.push((yield* post(revoke(key(200 + i), []))).status)
    expect(fresh.filter((s) => s === 200).length).toBe(3)
    expect(fresh.filter((s) => s === 429).length).toBe(7)
    // The victim's genuine revokes still go through: B's (an issuer under an accepted root) and A's.
    const byB = yield* post(revoke(B, [w1, w2]))
    expect(byB.status).toBe(200)
    const byA = yield* post(revoke(A, [w1]))
    expect(byA.status).toBe(200)
    // And they took effect.
    const refused = jsonOf(yield* post(call(B, [w1, w2], "t/x"))).tally as JsonObject
    expect(refused.err).toEqual({ code: "revoked" })
  }))

  it.effect("keeps a known principal's allowance per peer and signer, apart from the general one", () => Effect.gen(function*() {
    const t = settableClock()
    const l = yield* Effect.withClock(RevokeRateLimit.make({ burst: 1, perSecond: 1 }), t.clock)
    const take = (peer: string, iss: string, known: boolean) => l.take(peer, { iss, known })
    expect((yield* take("addr:x", "k1", false)).ok).toBe(true)
    expect((yield* take("addr:x", "k2", false)).ok).toBe(false)
    expect((yield* take("addr:x", "root", true)).ok).toBe(true)
    expect((yield* take("addr:x", "root", true)).ok).toBe(false)
    expect((yield* take("addr:x", "other-root", true)).ok).toBe(true)
  }))
})
