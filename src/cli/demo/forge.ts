// The demo's cheats. An honest party builds writs and calls only through the issuing API
// (src/writ/issue.ts), which refuses to sign a writ given as data (section 7.5) or a call its
// chain does not admit. A dishonest party signs whatever it likes with its own key; this module
// is that party, so the demo can show the executor refusing what it sends. Nothing else uses it.
import { Effect } from "effect"
import { encodeBase64url } from "../../kernel/base64url.js"
import type { JsonObject } from "../../kernel/json.js"
import { RandomBytes, Signer } from "../../kernel/services.js"
import { type ObjectType, signingInput } from "../../writ/sign.js"

/** Signs `unsigned` as an object of type `typ` with the Signer's key, checking nothing. */
export const signAnything = (typ: ObjectType, unsigned: JsonObject): Effect.Effect<JsonObject, never, Signer> =>
  Effect.gen(function*() {
    const s = yield* Signer
    const sig = yield* s.sign(signingInput(typ, 1, unsigned))
    return { ...unsigned, sig: encodeBase64url(sig) }
  })

/** 16 random bytes, base64url (an `id` or `nnc`). */
export const freshId = Effect.flatMap(RandomBytes, (r) => Effect.map(r.bytes(16), encodeBase64url))
