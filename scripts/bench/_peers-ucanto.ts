// UCAN's side of `npm run bench -- peers`: `@ucanto/core` delegations (UCAN 0.9 in dag-cbor)
// signed by `@ucanto/principal` ed25519 signers derived from the shared seeds, the chain carried
// as the leaf delegation's CAR archive with its proofs inside (`Delegation.archive`). Link i is
// issued by key i to key i + 1 for `travel/book` on the root's DID with `nb.amount` narrowed by
// one; each link's proof is the one before. Verifying a token: `Delegation.extract` from the
// bytes, then `@ucanto/validator`'s `claim` for the capability: every delegation's signature
// (did:key resolved per issuer), its time bounds (exp, nbf), principal alignment (a proof's
// audience is the issuer of the delegation that cites it), and attenuation through the
// capability's `derives` (same resource, amount not widened), down to the root's self-issue.
// The validator reads the wall clock itself (dag-ucan's isExpired), so unlike the others it is
// not handed the fixed now; the chains' expiries lie years ahead of any clock it will read.
import { delegate, Delegation } from "@ucanto/core"
import { ed25519, Verifier } from "@ucanto/principal"
import { capability, claim, fail, ok, Schema } from "@ucanto/validator"
import { amountOf, ascii, expOf, KEYS, nonceOf, offsetIn, type Peer } from "./_peers-common.js"

const Book = capability({
  can: "travel/book",
  with: Schema.did(),
  nb: Schema.struct({ amount: Schema.integer() }),
  derives: (claimed, delegated) =>
    claimed.with !== delegated.with
      ? fail(`resource ${claimed.with} is not ${delegated.with}`)
      : claimed.nb.amount > delegated.nb.amount
        ? fail(`amount ${claimed.nb.amount} widens ${delegated.nb.amount}`)
        : ok({})
})

export const makeUcanto = async (): Promise<Peer> => {
  const signers = await Promise.all(KEYS.map((k) => ed25519.derive(k.seed)))
  // The service's own identity (`authority`): consulted only for issuers that are not did:key,
  // which none of these are. No revocation store: `validateAuthorization` accepts (Mandate's
  // chain verification does not consult revocations either; its executor does, separately).
  const service = await ed25519.derive(new Uint8Array(32).fill(0x5e))
  const options = { authority: service.verifier, principal: Verifier, validateAuthorization: () => ok({}) }
  const root = signers[0].did()

  return {
    name: "ucanto",
    sync: false,
    build: async (n, c, leafAmount) => {
      let d: Awaited<ReturnType<typeof delegate>> | undefined
      for (let i = 0; i < n; i++) {
        d = await delegate({
          issuer: signers[i],
          audience: signers[i + 1],
          capabilities: [{ can: "travel/book", with: root, nb: { amount: amountOf(i, n, leafAmount) } }],
          expiration: expOf(i),
          nonce: nonceOf("ucanto", n, c, i),
          proofs: d === undefined ? [] : [d]
        })
      }
      const leaf = d!
      const archived = await Delegation.archive(leaf)
      if (archived.error) throw archived.error
      const bytes = archived.ok
      const nonce = ascii(nonceOf("ucanto", n, c, n - 1))
      const sig = leaf.signature as Uint8Array
      return { bytes, sigAt: offsetIn(bytes, sig, sig.length - 32), payloadAt: offsetIn(bytes, nonce, nonce.length >> 1) }
    },
    verify: async (bytes) => {
      const extracted = await Delegation.extract(bytes)
      if (extracted.error) throw new Error(extracted.error.message)
      const result = await claim(Book, [extracted.ok], options)
      if (result.error) {
        // The message nests every path explored; the innermost cause names what failed.
        const lines = result.error.message.split("\n").map((l) => l.trim().replace(/^- /, ""))
        throw new Error(lines.find((l) => /signature|expired|not valid before|widens|align/i.test(l)) ?? lines[0])
      }
    }
  }
}
