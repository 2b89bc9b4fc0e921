/**
 * The verification cache: one service, owned by whoever composes a verifier (the executor, a
 * server), replacing the module-level maps that once held decoded keys and verified signatures.
 *
 * What it keeps (DESIGN.md, "Crypto hot path"):
 *  - per did:key, the judged key (decoded, point checked, node's key object built) or the fact
 *    that the string names no usable key: point decoding is the costly part of a key, and a key
 *    recurs across every object it signs; the same for a key written in another protocol's text
 *    form (YEA's `ed25519:` keys), under that text, decoded by the caller's function;
 *  - per signature check (object type, identity, signer), the fact that it passed: the identity is
 *    the hash of the canonical object with `sig`, so a hit is the same bytes under the same key;
 *  - per verified value (a chain as received), what verifying it yielded, under a
 *    key its owner derives from the exact bytes received (a SHA-256 of them), so that the same
 *    bytes again cost one hash and one lookup. Only what verified is ever held: a hit can only
 *    repeat an acceptance of the very same bytes, never turn a refusal into one.
 *
 * Rules: every key is a copy (a key taken from a request is often a slice of
 * the request's text, and a cached slice keeps the whole body alive); the cache is bounded in
 * bytes, counting each key, its value and a fixed per-entry overhead; the least recently used
 * entries go first. A verifier with no cache in its context computes everything afresh.
 */
import { Config, type ConfigError, Context, Effect, Layer, Option } from "effect"
import type { KeyObject } from "node:crypto"
import { didKeyBytes, hasDidKeyShape } from "./didkey.js"
import { publicKeyObject } from "./ed25519.js"

/** A did:key judged usable: its 32 bytes and node's key object for verifying with it. */
export interface VerifyingKey {
  readonly publicKey: Uint8Array
  readonly object: KeyObject
}

export interface VerificationCacheStats {
  readonly entries: number
  /** Bytes accounted to the entries held now (keys, values, per-entry overhead). */
  readonly bytes: number
  readonly maxBytes: number
  /** How many times a did:key was decoded and judged (a miss), since the cache was made. */
  readonly keysJudged: number
}

/**
 * The same operations as plain functions, for a verifier that reads the service once at its entry
 * point and then runs section 6.1 as ordinary code (an Effect per lookup cost
 * more than the lookup, as measured). Only what is in the cache's context ever calls them.
 */
export interface VerificationCacheSync {
  readonly key: (did: string) => Option.Option<VerifyingKey>
  /**
   * The key a protocol's own text form `name` names (YEA's `ed25519:...`), judged once: `bytes`
   * decodes the text to the 32 key bytes (None when it is not a key's text); the point checks are
   * the kernel's. A name longer than {@link MAX_KEY_NAME_LENGTH} is never looked up or kept.
   */
  readonly named: (name: string, bytes: (name: string) => Option.Option<Uint8Array>) => Option.Option<VerifyingKey>
  readonly passed: (check: string) => boolean
  readonly remember: (check: string) => void
  readonly verified: (key: string) => Option.Option<unknown>
  readonly hold: (key: string, value: unknown, bytes: number) => void
}

export interface VerificationCacheShape {
  /** The operations below as plain functions. */
  readonly sync: VerificationCacheSync
  /** The key `did` names, judged once and remembered, or None when it names no usable key. */
  readonly key: (did: string) => Effect.Effect<Option.Option<VerifyingKey>>
  /** Whether the signature check named `check` already passed. */
  readonly passed: (check: string) => Effect.Effect<boolean>
  /** Remembers that the signature check named `check` passed. */
  readonly remember: (check: string) => Effect.Effect<void>
  /** The value held for `key` by {@link VerificationCacheShape.hold}, if it is still held. */
  readonly verified: (key: string) => Effect.Effect<Option.Option<unknown>>
  /**
   * Holds `value`, what verifying the bytes named by `key` yielded, accounted at `bytes` (what the
   * value keeps alive: its owner counts it, and the value must share no storage with a request).
   */
  readonly hold: (key: string, value: unknown, bytes: number) => Effect.Effect<void>
  readonly stats: Effect.Effect<VerificationCacheStats>
}

export interface VerificationCacheOptions {
  /** The most bytes the entries may account for. */
  readonly maxBytes: number
}

/** The default bound: about 40,000 keys or 60,000 signature checks. */
export const DEFAULT_VERIFICATION_CACHE_BYTES = 16 * 1024 * 1024

/** The longest key text `named` looks up: an `ed25519:` key is 51 characters, a did:key 56. */
export const MAX_KEY_NAME_LENGTH = 64

/** Accounted per entry beside its key and value: the map slot, the entry record, headers. */
export const ENTRY_OVERHEAD_BYTES = 128
/** Accounted for a judged key: its 32 bytes and node's key object (a native handle). */
export const KEY_VALUE_BYTES = 32 + 256

/**
 * A flat copy of `s` that shares no storage with it: V8 represents `slice`s and concatenations as
 * views of their source, which a cache must not keep. UTF-16LE round-trips every JS string exactly.
 */
export const copyString = (s: string): string => Buffer.from(s, "utf16le").toString("utf16le")

/** What a string costs to keep: two bytes per UTF-16 code unit (V8 may use one; never more). */
const stringBytes = (s: string): number => 2 * s.length

type Entry =
  | { readonly kind: "key"; readonly key: Option.Option<VerifyingKey> }
  | { readonly kind: "passed" }
  | { readonly kind: "value"; readonly value: unknown; readonly bytes: number }

/** 32 key bytes judged (canonical point, not of small order) and node's key object built. */
export const judgeKeyBytes = (publicKey: Uint8Array): Option.Option<VerifyingKey> => {
  const object = publicKeyObject(publicKey)
  return object === null ? Option.none() : Option.some({ publicKey, object })
}

const judge = (did: string): Option.Option<VerifyingKey> => Option.flatMap(didKeyBytes(did), judgeKeyBytes)

export class VerificationCache extends Context.Tag("mandate/VerificationCache")<VerificationCache, VerificationCacheShape>() {
  /** A cache bounded by `options.maxBytes`. */
  static make(options: VerificationCacheOptions): VerificationCacheShape {
    const maxBytes = Math.max(0, Math.floor(options.maxBytes))
    // Insertion order is recency order: eviction takes from the front, and a hit on an entry in the
    // older half is moved to the end. A hit in the newer half stays put: moving costs a delete and
    // an insert, and a key hit on every call (a principal's did:key) was moved on every call
    // (8% of a fresh chain's verification, as measured); it is not near eviction there, and moves
    // once it drifts into the older half. `touched` is the insertion count when it was last placed.
    const entries = new Map<string, { readonly entry: Entry; readonly bytes: number; touched: number }>()
    let bytes = 0
    let keysJudged = 0
    let placed = 0
    const lookup = (k: string): Entry | undefined => {
      const hit = entries.get(k)
      if (hit === undefined) return undefined
      if (placed - hit.touched > entries.size >> 1) {
        entries.delete(k)
        hit.touched = ++placed
        entries.set(k, hit)
      }
      return hit.entry
    }
    const store = (k: string, entry: Entry): void => {
      const key = copyString(k)
      const cost = stringBytes(key) + ENTRY_OVERHEAD_BYTES +
        (entry.kind === "key" && Option.isSome(entry.key) ? KEY_VALUE_BYTES : entry.kind === "value" ? Math.max(0, entry.bytes) : 0)
      if (cost > maxBytes) return
      const old = entries.get(key)
      if (old !== undefined) {
        entries.delete(key)
        bytes -= old.bytes
      }
      while (bytes + cost > maxBytes) {
        const [oldest, e] = entries.entries().next().value!
        entries.delete(oldest)
        bytes -= e.bytes
      }
      entries.set(key, { entry, bytes: cost, touched: ++placed })
      bytes += cost
    }
    /** The key held under `k`, or judged by `judgeIt` once and held. */
    const keyUnder = (k: string, judgeIt: () => Option.Option<VerifyingKey>): Option.Option<VerifyingKey> => {
      const hit = lookup(k)
      if (hit !== undefined && hit.kind === "key") return hit.key
      keysJudged++
      const judged = judgeIt()
      store(k, { kind: "key", key: judged })
      return judged
    }
    const sync: VerificationCacheSync = {
      // Nothing longer than a did:key is looked up, copied or decoded.
      key: (did) => (hasDidKeyShape(did) ? keyUnder(`k ${did}`, () => judge(did)) : Option.none()),
      // `n ` keeps these apart from did:keys (`k `): a name is judged by its owner's decoding.
      named: (name, bytes) =>
        name.length > MAX_KEY_NAME_LENGTH ? Option.none() : keyUnder(`n ${name}`, () => Option.flatMap(bytes(name), judgeKeyBytes)),
      passed: (check) => lookup(`s ${check}`) !== undefined,
      remember: (check) => store(`s ${check}`, { kind: "passed" }),
      verified: (key) => {
        const hit = lookup(`v ${key}`)
        return hit !== undefined && hit.kind === "value" ? Option.some(hit.value) : Option.none()
      },
      hold: (key, value, bytes) => store(`v ${key}`, { kind: "value", value, bytes })
    }
    return {
      sync,
      key: (did) => Effect.sync(() => sync.key(did)),
      passed: (check) => Effect.sync(() => sync.passed(check)),
      remember: (check) => Effect.sync(() => sync.remember(check)),
      verified: (key) => Effect.sync(() => sync.verified(key)),
      hold: (key, value, bytes) => Effect.sync(() => sync.hold(key, value, bytes)),
      stats: Effect.sync(() => ({ entries: entries.size, bytes, maxBytes, keysJudged }))
    }
  }

  static layer(options: VerificationCacheOptions): Layer.Layer<VerificationCache> {
    return Layer.sync(VerificationCache, () => VerificationCache.make(options))
  }

  /** Sized by `MANDATE_VERIFICATION_CACHE_BYTES`, default {@link DEFAULT_VERIFICATION_CACHE_BYTES}. */
  static readonly layerConfig: Layer.Layer<VerificationCache, ConfigError.ConfigError> = Layer.effect(
    VerificationCache,
    Effect.map(
      Config.integer("MANDATE_VERIFICATION_CACHE_BYTES").pipe(
        Config.withDefault(DEFAULT_VERIFICATION_CACHE_BYTES),
        Config.validate({ message: "a byte count of zero or more", validation: (n) => n >= 0 })
      ),
      (maxBytes) => VerificationCache.make({ maxBytes })
    )
  )
}

/** The key `did` names, judged afresh (no cache). */
export const judgeKey = (did: string): Option.Option<VerifyingKey> => (hasDidKeyShape(did) ? judge(did) : Option.none())

/** The key `did` names, through `cache` when there is one: the plain form of {@link verifyingKey}. */
export const verifyingKeySync = (cache: VerificationCacheSync | undefined, did: string): Option.Option<VerifyingKey> =>
  cache === undefined ? judge(did) : cache.key(did)

/** The cache in context as plain functions, or undefined: what an entry point reads once. */
export const verificationCacheSync: Effect.Effect<VerificationCacheSync | undefined> = Effect.map(
  Effect.serviceOption(VerificationCache),
  (o) => (Option.isSome(o) ? o.value.sync : undefined)
)

/** The key `did` names, through the cache in context when there is one. */
export const verifyingKey = (did: string): Effect.Effect<Option.Option<VerifyingKey>> =>
  Effect.flatMap(Effect.serviceOption(VerificationCache), (cache) =>
    Option.isSome(cache) ? cache.value.key(did) : Effect.sync(() => judge(did)))
