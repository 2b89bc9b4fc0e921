export { HTTP_CODES, writHttpApp } from "./server.js"
export { DEFAULT_LIMITS, listen, type ListenerLimits, type TlsOptions } from "./listen.js"
export { readBody } from "./body.js"
export {
  type ClientTls, fetchWellKnown, httpForwarder, post, type PostAnswer, type PostOptions, postWrit,
  WritHttpError
} from "./client.js"
export {
  parseBindings, parseSubjectAltName, peerOfCertificate, type TransportBindings, transportPeerBindings
} from "./peer.js"
export { type RateLimitOptions, RevokeRateLimit } from "./rate-limit.js"
