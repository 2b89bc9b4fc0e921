// Who delivered a request (section 10, section 7.6): the transport-authenticated peer, taken from
// the TLS connection and never from a header. A verified client certificate names its peer by
// (a) a URI subject alternative name that is an Ed25519 did:key, or (b) a transport identity the
// bindings file lists: its SHA-256 fingerprint (`sha256:<hex>`) or one of its subject alternative
// names (`uri:<value>`, `dns:<value>`, `email:<value>`, `ip:<value>`). A certificate that names no
// identity the executor recognizes, or more than one, is a peer it holds no binding for: section
// 7.6 fails closed, and such a connection is never presented as one that authenticated no peer.
import { Effect, Layer, Option } from "effect"
import type { IncomingMessage } from "node:http"
import type { PeerCertificate, TLSSocket } from "node:tls"
import { publicKeyFromDidKey } from "../../kernel/didkey.js"
import { Peer, PeerBindings } from "../../writ/executor/services.js"

/** A bindings file: transport identity -> the keys that peer speaks for (section 7.6). */
export type TransportBindings = Readonly<Record<string, ReadonlyArray<string>>>

/** What the connection says about its peer. `unverified`: a certificate was presented that the
 * TLS layer did not verify; the binding refuses the request rather than treat it as anonymous. */
export type ConnectionPeer =
  | { readonly _tag: "peer"; readonly peer: Peer; readonly fingerprint: string | null }
  | { readonly _tag: "unverified"; readonly error: string }

const isDidKey = (s: string): boolean => s.startsWith("did:key:") && Option.isSome(publicKeyFromDidKey(s))

/**
 * Node's `subjectaltname`: `TYPE:value` entries separated by ", "; a value holding a comma or a
 * quote is written as a JSON string. Returns `[type, value]` pairs, type lower-cased.
 */
export const parseSubjectAltName = (san: string | undefined): Array<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  if (san === undefined || san === "") return out
  let i = 0
  while (i < san.length) {
    const colon = san.indexOf(":", i)
    if (colon < 0) break
    const type = san.slice(i, colon).trim().toLowerCase()
    let j = colon + 1
    let value: string
    if (san[j] === "\"") {
      // A JSON string: scan to its closing quote.
      let k = j + 1
      while (k < san.length && san[k] !== "\"") k += san[k] === "\\" ? 2 : 1
      try {
        value = JSON.parse(san.slice(j, k + 1)) as string
      } catch {
        value = san.slice(j + 1, k)
      }
      j = k + 1
    } else {
      const end = san.indexOf(", ", j)
      value = san.slice(j, end < 0 ? san.length : end)
      j = end < 0 ? san.length : end
    }
    out.push([type, value])
    const next = san.indexOf(", ", j)
    if (next < 0) break
    i = next + 2
  }
  return out
}

/** The transport identities a certificate carries, as the bindings file spells them. */
export const certificateIdentities = (cert: PeerCertificate): { readonly dids: Array<string>; readonly names: Array<string> } => {
  const dids: Array<string> = []
  const names: Array<string> = []
  if (typeof cert.fingerprint256 === "string" && cert.fingerprint256 !== "") {
    names.push(`sha256:${cert.fingerprint256.replace(/:/g, "").toLowerCase()}`)
  }
  for (const [type, value] of parseSubjectAltName(cert.subjectaltname)) {
    const t = type === "ip address" ? "ip" : type
    if (t === "uri" && isDidKey(value)) dids.push(value)
    names.push(`${t}:${value}`)
  }
  return { dids, names }
}

/**
 * Names the peer of a verified certificate: exactly one recognized identity (a did:key URI SAN,
 * or a transport identity present in `bindings`), else unnamed (section 7.6: "carries no
 * identity E recognizes, or two").
 */
export const peerOfCertificate = (cert: PeerCertificate, bindings: TransportBindings): Peer => {
  const { dids, names } = certificateIdentities(cert)
  const recognized = new Set<string>(dids)
  for (const n of names) if (Object.prototype.hasOwnProperty.call(bindings, n)) recognized.add(n)
  return recognized.size === 1 ? Peer.named([...recognized][0]) : Peer.unnamed
}

/** The peer of one request, from its connection alone. */
export const peerOfRequest = (req: IncomingMessage, bindings: TransportBindings): ConnectionPeer => {
  const socket = req.socket as Partial<TLSSocket>
  if (socket.encrypted !== true || typeof socket.getPeerCertificate !== "function") {
    // Plain HTTP: the transport authenticated no peer (section 7.6 skips the check; audited).
    return { _tag: "peer", peer: Peer.none, fingerprint: null }
  }
  const cert = socket.getPeerCertificate()
  const presented = cert !== null && typeof cert === "object" && Object.keys(cert).length > 0
  if (!presented) return { _tag: "peer", peer: Peer.none, fingerprint: null }
  if (socket.authorized !== true) {
    return { _tag: "unverified", error: String(socket.authorizationError ?? "client certificate not verified") }
  }
  return {
    _tag: "peer",
    peer: peerOfCertificate(cert, bindings),
    fingerprint: typeof cert.fingerprint256 === "string" ? cert.fingerprint256 : null
  }
}

/**
 * The executor's PeerBindings for this transport (section 7.6): a peer named by a did:key URI SAN
 * speaks for that key; any peer speaks for the keys the bindings file lists for it; nothing else.
 */
export const transportPeerBindings = (bindings: TransportBindings): Layer.Layer<PeerBindings> =>
  Layer.succeed(PeerBindings, {
    speaksFor: (peer, key) =>
      Effect.succeed(
        (isDidKey(peer) && peer === key) ||
          (Object.prototype.hasOwnProperty.call(bindings, peer) && (bindings[peer] ?? []).includes(key))
      )
  })

/** Reads a bindings file's JSON: an object mapping each transport identity to an array of keys. */
export const parseBindings = (json: unknown): Option.Option<TransportBindings> => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return Option.none()
  const out: Record<string, ReadonlyArray<string>> = {}
  for (const [k, v] of Object.entries(json)) {
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && isDidKey(x))) return Option.none()
    out[k] = v as ReadonlyArray<string>
  }
  return Option.some(out)
}
