// The peers benchmark's implementations (scripts/bench/_peers-*.ts) hold the claims its header makes:
// each accepts the chain it built and refuses it with a byte of the leaf's signature or of its
// signed payload flipped; each checks attenuation as the header says; and the two text chains (Writ, the JWS baseline) refuse a chain with a
// link cut out of the middle, and the JWS baseline a chain past 8 links. Real WebAssembly and
// WebCrypto run here, so these are `it.live`.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeBiscuit } from "../../scripts/bench/_peers-biscuit.js"
import { AMOUNT, flip, type Peer } from "../../scripts/bench/_peers-common.js"
import { jws } from "../../scripts/bench/_peers-jws.js"
import { mandate } from "../../scripts/bench/_peers-mandate.js"
import { makeUcanto } from "../../scripts/bench/_peers-ucanto.js"

/** "accept", or the first line of the refusal. */
const outcome = (p: Peer, bytes: Uint8Array): Effect.Effect<string> =>
  Effect.promise(async () => {
    try {
      if (p.sync) p.verify(bytes)
      else await p.verify(bytes)
      return "accept"
    } catch (e) {
      return `refused: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`
    }
  })

const peers: Effect.Effect<ReadonlyArray<Peer>, unknown> = Effect.gen(function* () {
  const biscuit = yield* makeBiscuit
  const ucanto = yield* Effect.promise(makeUcanto)
  return [mandate, biscuit, ucanto, jws]
})

const text = (b: Uint8Array) => new TextDecoder().decode(b)
const bytesOf = (s: string) => new TextEncoder().encode(s)

describe("bench peers: every implementation", () => {
  it.live("accepts its own chain and refuses a flipped signature byte and a flipped payload byte, at depths 1 and 4", () =>
    Effect.gen(function* () {
      for (const p of yield* peers) {
        for (const n of [1, 4]) {
          const t = yield* Effect.promise(() => p.build(n, 7_000 + n))
          expect(yield* outcome(p, t.bytes), `${p.name} d${n} valid`).toBe("accept")
          expect(yield* outcome(p, flip(t.bytes, t.sigAt)), `${p.name} d${n} signature`).toMatch(/^refused: /)
          expect(yield* outcome(p, flip(t.bytes, t.payloadAt)), `${p.name} d${n} payload`).toMatch(/^refused: /)
        }
      }
    })
  )

  it.live("attenuation as each checks it: a leaf that widens the amount is refused by Writ, ucanto and JWS; biscuit, whose blocks can only add checks, accepts it but refuses a leaf below the request's amount", () =>
    Effect.gen(function* () {
      const all = yield* peers
      const widened: Record<string, string> = {}
      const belowRequest: Record<string, string> = {}
      for (const p of all) {
        widened[p.name] = (yield* outcome(p, (yield* Effect.promise(() => p.build(3, 7_400, AMOUNT + 1))).bytes)).slice(0, 7)
        // biscuit's authorizer asks for amount(100); the others verify a chain with no request.
        belowRequest[p.name] = (yield* outcome(p, (yield* Effect.promise(() => p.build(3, 7_500, 50))).bytes)).slice(0, 7)
      }
      expect(widened).toEqual({ mandate: "refused", "biscuit-wasm": "accept", ucanto: "refused", "jose-jws": "refused" })
      expect(belowRequest).toEqual({ mandate: "accept", "biscuit-wasm": "refused", ucanto: "accept", "jose-jws": "accept" })
    })
  )

  it.live("Writ refuses a chain with its middle writ cut out (chain_broken) and a flipped leaf signature as bad_signature", () =>
    Effect.gen(function* () {
      const t = yield* Effect.promise(() => mandate.build(3, 7_100))
      const chain = JSON.parse(text(t.bytes)) as Array<unknown>
      expect(yield* outcome(mandate, bytesOf(JSON.stringify([chain[0], chain[2]])))).toMatch(/^refused: chain_broken/)
      expect(yield* outcome(mandate, flip(t.bytes, t.sigAt))).toMatch(/^refused: bad_signature/)
    })
  )

  it.live("the JWS baseline refuses a chain with its middle link cut out, and one of more than 8 links", () =>
    Effect.gen(function* () {
      const t = yield* Effect.promise(() => jws.build(3, 7_200))
      const links = text(t.bytes).split("~")
      // Link 2 is signed by key 2, which the root's link does not name.
      expect(yield* outcome(jws, bytesOf([links[0], links[2]].join("~")))).toMatch(/^refused: /)
      const long = yield* Effect.promise(() => jws.build(8, 7_300))
      expect(yield* outcome(jws, long.bytes)).toBe("accept")
      expect(yield* outcome(jws, bytesOf(`${text(long.bytes)}~${links[0]}`))).toBe("refused: a chain holds 1 to 8 links")
    })
  )
})
