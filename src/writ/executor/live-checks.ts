// The checks of section 7 whose answer can change while the received bytes stay the same: step 4
// (expiry, by the executor's own clock), step 5 (root acceptance, a decision held outside the
// chain), step 7 (revocation) and the peer binding that opens step 8 (section 7.6: who delivered
// the bytes). Every other check of steps 1 to 8 is a function of the bytes and of the executor's
// key alone. Admission (admission.ts) runs them in section 7's order; a replay answered from the
// lookup (replays.ts) runs the same functions, so it is refused exactly as full processing would.
import { Effect } from "effect"
import { checkCallExpiry } from "../call.js"
import type { WritError } from "../reason.js"
import type { CheckedWrit } from "../writ.js"
import { refuse, type SignedRefusal } from "./failures.js"
import type { Peer } from "./services.js"
import { type StepEnv, unsavedCovers } from "./state.js"
import type { StoreError } from "./stores.js"

/** Step 4, forward calls only: every writ unexpired at `now` (and section 12's root lifetime). */
export const checkExpiry = (chain: ReadonlyArray<CheckedWrit>, now: number, standing: boolean): Effect.Effect<void, WritError> =>
  standing ? Effect.void : checkCallExpiry(chain, now)

/** Step 5: the executor acts under writs rooted at the chain's root issuer (section 7.1). */
export const checkRoot = (env: StepEnv<"roots">, chain: ReadonlyArray<CheckedWrit>): Effect.Effect<void, SignedRefusal> =>
  Effect.flatMap(env.roots.accepts(chain[0].value.iss), (ok) => (ok ? Effect.void : refuse("root_not_accepted")))

/** Step 7, forward calls only: no writ of the chain revoked, by identity or key-wide, in the store
 * or among the revokes this process could not persist (section 9). */
export const checkRevoked = (
  env: StepEnv<"revokes", "unsaved">,
  chain: ReadonlyArray<string>,
  issuers: ReadonlyArray<string>,
  standing: boolean
): Effect.Effect<void, SignedRefusal | StoreError> =>
  standing
    ? Effect.void
    : Effect.flatMap(env.revokes.covers(chain, issuers), (revoked) =>
      revoked || unsavedCovers(env, chain, issuers) ? refuse("revoked") : Effect.void)

/** Step 8's first check (section 7.6): an authenticated peer speaks for `from`, failing closed. */
export const checkPeer = (env: StepEnv<"peers">, peer: Peer, from: string): Effect.Effect<void, SignedRefusal> =>
  peer._tag === "none"
    ? Effect.void
    : peer._tag === "unnamed"
    ? refuse("peer_mismatch")
    : Effect.flatMap(env.peers.speaksFor(peer.id, from), (ok) => (ok ? Effect.void : refuse("peer_mismatch")))
