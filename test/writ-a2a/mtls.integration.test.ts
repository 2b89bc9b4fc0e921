// The A2A endpoint over mTLS (section 7.6): the peer is the client certificate's, never a member
// of the message; a call from a peer that does not speak for its caller is refused (signed), one
// from the caller's own certificate runs, and a client without a certificate is not admitted.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { plainExecutor } from "../../src/app/plain-executor.js"
import { listenA2a } from "../../src/bind/writ-a2a/http.js"
import { resolvePeer, sendCall } from "../../src/bind/writ-a2a/http-client.js"
import { A2aTasks } from "../../src/bind/writ-a2a/rpc.js"
import { clientLayer } from "../../src/bind/writ-http/client.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Application } from "../../src/writ/executor/services.js"
import { makePki } from "../bind-writ-http/inproc.js"
import { tempDir } from "../bind-writ-http/support.js"
import { runCli } from "../support/cli.js"

const didOf = (out: string) => out.match(/did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+/)![0]

describe("the A2A endpoint over mTLS", () => {
  it.live("the peer is the client certificate's: the caller's own runs, another's is refused signed, none is not admitted", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = tempDir("a2a-mtls")
      const cli = (...args: Array<string>) => Effect.promise(() => runCli(args)).pipe(Effect.map((r) => r.stdout))
      const A = didOf(yield* cli("keygen", join(dir, "a.key")))
      const B = didOf(yield* cli("keygen", join(dir, "b.key")))
      const C = didOf(yield* cli("keygen", join(dir, "c.key")))
      yield* cli("writ", "issue", "--key", join(dir, "a.key"), "--hld", C, "--act", "travel", "--ttl", "3600", "--out", join(dir, "grant.json"))
      const callOf = (name: string) =>
        Effect.zipRight(
          cli("writ", "call", "--key", join(dir, "a.key"), "--chain", join(dir, "grant.json"), "--op", "travel/charge", "--args", "{\"amount\":1}", "--out", join(dir, name)),
          Effect.sync(() => JSON.parse(readFileSync(join(dir, name), "utf8")) as JsonObject)
        )
      const pki = makePki(dir)
      const certs = { a: pki.client("a", `URI:${A}`), b: pki.client("b", `URI:${B}`) }
      const context = yield* Layer.build(Layer.merge(plainExecutor({
        seed: new Uint8Array(Buffer.from(readFileSync(join(dir, "c.key"), "utf8").trim(), "hex")),
        application: Layer.succeed(Application, { perform: () => Effect.succeed({ st: "ok" as const, res: { done: true } }) }),
        roots: [A],
        bindings: {}
      }), A2aTasks.memory()))
      const bound = yield* listenA2a({ port: 0, tls: { key: pki.serverKey, cert: pki.serverCert, clientCa: pki.caCert } }).pipe(Effect.provide(context))
      expect(bound.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/a2a$/)
      const as = (who: "a" | "b" | null) => clientLayer({ ca: pki.caCert, ...(who === null ? {} : certs[who]) })

      const peer = yield* Effect.provide(resolvePeer(bound.base), as("a"))
      const mine = yield* Effect.provide(sendCall(peer, yield* callOf("one.json")), as("a"))
      expect(mine.verified.tally.value.st).toBe("ok")
      const other = yield* Effect.provide(sendCall(peer, yield* callOf("two.json")), as("b"))
      expect(other.verified.tally.value.st).toBe("failed")
      expect(other.verified.tally.value.err?.code).toBe("peer_mismatch")
      const none = yield* Effect.either(Effect.provide(sendCall(peer, yield* callOf("three.json")), as(null)))
      expect(Either.isLeft(none) && none.left.reason).toBe("mandate/unreachable")
    })), 120_000)
})
