// Attenuation and chain verification, spec section 4 (and section 2.1).
import { Context, Effect, Layer, String as Str } from "effect"
import { boundNarrows, has } from "./bound.js"
import { type WritError, writError } from "./reason.js"
import { chainShape, type ObjectInput } from "./verify.js"
import { type CheckedWrit, verifyWrit } from "./writ.js"

const p = (i: number) => `chain[${i}]`

/** Section 4 steps 1 to 5: is `child` a valid child of `parent`? First failure wins. */
export const checkChild = (child: CheckedWrit, parent: CheckedWrit, path?: string): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const C = child.value
    const P = parent.value
    const at = (m: string) => (path === undefined ? undefined : `${path}.${m}`)
    // 1. C.iss equals P.hld (`chain_broken`).
    if (C.iss !== P.hld) return yield* Effect.fail(writError("chain_broken", at("iss"), "issuer is not the parent's holder"))
    // 2. C.prv equals the identity of P (`chain_broken`).
    if (C.prv !== parent.id) return yield* Effect.fail(writError("chain_broken", at("prv"), "prv is not the parent's identity"))
    // 3. C.exp <= P.exp (`not_narrowed`).
    if (C.exp > P.exp) return yield* Effect.fail(writError("not_narrowed", at("exp"), "child outlives its parent"))
    // 4. Every bound of P is in C, same type, narrowed (`not_narrowed`). Parent names in canonical
    //    order, so the first failure reported is stable.
    for (const n of Object.keys(P.bnd).sort(Str.Order)) {
      if (!has(C.bnd, n)) return yield* Effect.fail(writError("not_narrowed", at(`bnd.${n}`), `child drops bound ${n}`))
      if (C.bnd[n].t !== P.bnd[n].t) return yield* Effect.fail(writError("not_narrowed", at(`bnd.${n}`), `child retypes bound ${n}`))
      if (!boundNarrows(C.bnd[n], P.bnd[n])) return yield* Effect.fail(writError("not_narrowed", at(`bnd.${n}`), `child widens bound ${n}`))
    }
    // 5. If P.bnd has `hld`, C.hld is one of its elements (`not_narrowed`).
    if (P.bnd.hld !== undefined) {
      const allowed = P.bnd.hld.v
      if (!allowed.some((k) => k === C.hld)) return yield* Effect.fail(writError("not_narrowed", at("hld"), "holder not in the parent's hld set"))
    }
  })

/** Section 4, the `depth` rule over a whole chain: the writ at index i of n, if it carries `depth`,
 * has (n - 1 - i) <= depth.v (`not_narrowed`). */
export const checkDepth = (chain: ReadonlyArray<CheckedWrit>, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    const n = chain.length
    for (let i = 0; i < n; i++) {
      const d = chain[i].value.bnd.depth
      if (d !== undefined && n - 1 - i > (d.v as number)) {
        return yield* Effect.fail(writError("not_narrowed", `${path}[${i}].bnd.depth`, `${n - 1 - i} writs below a depth of ${d.v}`))
      }
    }
  })

/** Section 7 step 2 (and section 9.1 step 2): every writ in the chain passes section 6.1, in array order. */
export const verifyChainWrits = (chain: ReadonlyArray<ObjectInput>, path = "chain"): Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> =>
  Effect.forEach(chain, (w, i) => verifyWrit(w, `${path}[${i}]`))

/** Section 7 step 3: the rest of section 4's chain verification over writs that passed section 6.1:
 * the root's `prv` is null (`chain_broken`); every adjacent pair passes steps 1 to 5, root first;
 * `depth` holds over the chain. */
export const checkChainLinks = (chain: ReadonlyArray<CheckedWrit>, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    if (chain.length === 0) return yield* Effect.fail(writError("malformed", path, "a chain is not empty"))
    // The root's prv is null.
    if (chain[0].value.prv !== null) return yield* Effect.fail(writError("chain_broken", `${path}[0].prv`, "the root's prv is not null"))
    // Every adjacent pair, root first.
    for (let i = 1; i < chain.length; i++) yield* checkChild(chain[i], chain[i - 1], `${path}[${i}]`)
    // depth over the whole chain.
    yield* checkDepth(chain, path)
  })

/** Section 4's chain verification as an operation: the chain is an array (`malformed`) of at most 8
 * elements (`too_large`), each an object (`malformed`), not empty (`malformed`); every writ passes
 * section 6.1 in array order; then the links and `depth` (`checkChainLinks`). Expiry is separate. */
export const verifyChain: (chain: unknown, path?: string) => Effect.Effect<ReadonlyArray<CheckedWrit>, WritError> = Effect.fn(
  "writ.verifyChain"
)(function* (chain: unknown, path = "chain") {
  const elements = yield* chainShape<ObjectInput>(chain, path)
  if (elements.length === 0) return yield* Effect.fail(writError("malformed", path, "a chain is not empty"))
  const writs = yield* verifyChainWrits(elements, path)
  yield* Effect.annotateCurrentSpan({ "writ.leaf": writs[writs.length - 1].id, "writ.chain_length": writs.length })
  yield* checkChainLinks(writs, path)
  return writs
})

/** Section 12 ("Time"): a root whose `exp` is more than 24 hours ahead is refused by default. */
export const DEFAULT_ROOT_LIFETIME_SECONDS = 86_400

/**
 * How far ahead of `now` a root's `exp` may be (section 12, "Time": verifiers SHOULD reject a root
 * whose `exp` is more than 24 hours ahead unless configured otherwise, reason `expired`). `null`
 * lifts the limit. A reference with a default, so every verifier applies the rule unless its
 * composition says otherwise; an executor reads it once, when it is built.
 */
export class RootLifetime extends Context.Reference<RootLifetime>()("mandate/writ/RootLifetime", {
  defaultValue: (): { readonly maxSeconds: number | null } => ({ maxSeconds: DEFAULT_ROOT_LIFETIME_SECONDS })
}) {
  static layer(maxSeconds: number | null): Layer.Layer<never> {
    return Layer.succeedContext(Context.make(RootLifetime, { maxSeconds }))
  }
}

/** Section 7 step 4: for every writ in the chain, `now` < `exp` (`expired`); then section 12's
 * limit on how far ahead the root's `exp` may be (`expired`). */
export const checkExpiry = (chain: ReadonlyArray<CheckedWrit>, now: number, path = "chain"): Effect.Effect<void, WritError> =>
  Effect.gen(function* () {
    for (let i = 0; i < chain.length; i++) {
      if (!(now < chain[i].value.exp)) return yield* Effect.fail(writError("expired", `${path}[${i}].exp`, `expired at ${chain[i].value.exp}, now ${now}`))
    }
    const { maxSeconds } = yield* RootLifetime
    if (chain.length > 0 && maxSeconds !== null && chain[0].value.exp - now > maxSeconds) {
      return yield* Effect.fail(
        writError("expired", `${path}[0].exp`, `the root runs ${chain[0].value.exp - now} s past now, over the ${maxSeconds} s allowed (section 12)`)
      )
    }
  })
