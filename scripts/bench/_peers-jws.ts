// The plain baseline of `npm run bench -- peers`: a chain of EdDSA JWS (RFC 7515 compact form,
// RFC 8037 Ed25519) made and checked with `jose`. Link i is a JWT signed by key i whose payload
// names the next key (`nxt`, the raw public key in base64url), its own expiry and a narrowed
// amount; the links travel joined by `~`. Verified link by link from the trusted root key:
// `jwtVerify` (alg pinned to EdDSA, signature, `exp` against the fixed now), then the link is
// issued by the key the previous link named, and neither `exp` nor `amt` grows.
import { createPrivateKey } from "node:crypto"
import { importJWK, jwtVerify, SignJWT } from "jose"
import { amountOf, ascii, expOf, KEYS, nonceOf, NOW, offsetIn, type Peer } from "./_peers-common.js"

const b64u = (b: Uint8Array): string => Buffer.from(b).toString("base64url")
const X = KEYS.map((k) => b64u(k.pub))
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex")
const privateKeys = KEYS.map((k) => createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, k.seed]), format: "der", type: "pkcs8" }))

// Imported public keys by `x`, as Mandate's VerificationCache keeps judged did:keys: keys recur in
// practice, so neither side pays for decoding a key it has seen. Tokens are never cached.
const keys = new Map<string, CryptoKey>()
const keyFor = async (x: string): Promise<CryptoKey> => {
  const hit = keys.get(x)
  if (hit !== undefined) return hit
  const k = (await importJWK({ kty: "OKP", crv: "Ed25519", x }, "EdDSA")) as CryptoKey
  keys.set(x, k)
  return k
}

const currentDate = new Date(NOW * 1000)
const decoder = new TextDecoder("utf-8", { fatal: true })

export const jws: Peer = {
  name: "jose-jws",
  sync: false,
  build: async (n, c, leafAmount) => {
    const links: Array<string> = []
    for (let i = 0; i < n; i++) {
      const payload = { iss: X[i], nxt: X[i + 1], exp: expOf(i), amt: amountOf(i, n, leafAmount), nnc: nonceOf("jws", n, c, i) }
      links.push(await new SignJWT(payload).setProtectedHeader({ alg: "EdDSA" }).sign(privateKeys[i]))
    }
    const bytes = ascii(links.join("~"))
    const [, body, sig] = links[n - 1].split(".")
    // The middle of the leaf's signature, and of its payload (both base64url segments).
    return { bytes, sigAt: offsetIn(bytes, ascii(sig), 43), payloadAt: offsetIn(bytes, ascii(body), body.length >> 1) }
  },
  verify: async (bytes) => {
    const links = decoder.decode(bytes).split("~")
    if (links.length < 1 || links.length > 8) throw new Error("a chain holds 1 to 8 links")
    let signer = X[0]
    let exp = Number.POSITIVE_INFINITY
    let amt = Number.POSITIVE_INFINITY
    for (const link of links) {
      const { payload } = await jwtVerify(link, await keyFor(signer), { algorithms: ["EdDSA"], currentDate })
      if (payload.iss !== signer) throw new Error("link not issued by the key the previous link named")
      if (typeof payload.nxt !== "string" || typeof payload.amt !== "number" || typeof payload.exp !== "number") throw new Error("malformed link")
      if (payload.exp > exp || payload.amt > amt) throw new Error("link widens its parent")
      signer = payload.nxt
      exp = payload.exp
      amt = payload.amt
    }
  }
}
