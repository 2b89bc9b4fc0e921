// `mandate yea doctor [--url URL ...]` (docs/cli.md `doctor`): node version, the agent key and its
// permissions, whether the principal key is readable here (a warning: an agent on this account
// could read it too, design.md known limits), each saved grant's signatures, holder, scope and
// expiry, and each service's reachability (HELLO). One line per check, `ok`, `warn` or `fail`;
// exit status 1 when any check fails.
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer } from "effect"
import { connect } from "../bind/yea-connect/index.js"
import { unixSeconds } from "../kernel/clock.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { canonical } from "../yea/canonical.js"
import { makeClient } from "../yea/client.js"
import { decodeGrant, verifyChain } from "../yea/grant.js"
import { agentKeyPath, checkPrivateDir, yeaHome, principalKeyPath, readGrants, readPublicKey } from "./yea-home.js"
import { cliError, runCommand } from "./writ-io.js"

const urls = Options.text("url").pipe(Options.repeated, Options.withDescription("a service to reach with HELLO (repeatable)"))

type Level = "ok" | "warn" | "fail"

export const yeaDoctorCommand = Command.make("doctor", { urls }, (o) =>
  runCommand(
    Effect.gen(function* () {
      let failed = 0
      const say = (level: Level, what: string, detail: string) =>
        Effect.zipRight(Effect.sync(() => void (level === "fail" && failed++)), Console.log(`${level.padEnd(4)} ${what}: ${detail}`))
      const h = (yield* yeaHome)

      const major = Number(process.versions.node.split(".")[0])
      yield* say(major >= 20 ? "ok" : "fail", "node", `${process.versions.node}${major >= 20 ? "" : " (20 or later needed)"}`)

      const home = yield* Effect.either(checkPrivateDir(h.home))
      yield* Either.match(home, { onLeft: (e) => say("fail", "home", `${h.home}: ${e.reason}: ${e.message}`), onRight: () => say("ok", "home", h.home) })

      const agent = yield* Effect.either(readPublicKey(agentKeyPath(h)))
      yield* Either.match(agent, {
        onLeft: (e) => say("fail", "agent key", `${e.reason}: ${e.message}`),
        onRight: (k) => say("ok", "agent key", `${k} (mode 0600)`)
      })

      const principal = yield* Effect.either(readPublicKey(principalKeyPath(h)))
      yield* Either.match(principal, {
        onLeft: (e) =>
          e.reason === "mandate/no_key"
            ? say("ok", "principal key", "not on this machine (grants are signed elsewhere)")
            : say("fail", "principal key", `${principalKeyPath(h)}: ${e.reason}: ${e.message}`),
        onRight: (k) =>
          say("warn", "principal key", `${k} is readable on this machine; an agent with shell access could read it and sign its own consent${h.principalHome === h.home ? " (it shares the agent's folder; set YEA_PRINCIPAL_HOME)" : ""}`)
      })

      const now = yield* unixSeconds
      const grants = yield* Effect.either(readGrants(h))
      if (Either.isLeft(grants)) yield* say("fail", "grants", `${grants.left.reason}: ${grants.left.message}`)
      else if (grants.right.length === 0) yield* say("warn", "grants", "none saved; `mandate yea grant` signs one")
      else {
        for (const [i, t] of grants.right.entries()) {
          const what = `grant ${i}`
          const g = decodeGrant(t)
          if (Either.isLeft(g)) {
            yield* say("fail", what, `${g.left.reason}: ${g.left.message}`)
            continue
          }
          const chain = verifyChain(g.right, { trusted: [g.right.principal], proofKey: g.right.holder })
          if (Either.isLeft(chain)) {
            yield* say("fail", what, `${chain.left.reason}: ${chain.left.message}`)
            continue
          }
          const caveats = g.right.blocks.flatMap((b) => b.caveats)
          const exps = caveats.flatMap((c) => (typeof c === "object" && c !== null && "exp" in c && typeof c.exp === "number" ? [c.exp] : []))
          const exp = exps.length > 0 ? Math.min(...exps) : undefined
          const scope = caveats.map((c) => Either.getOrElse(canonical(c), () => "?")).join(" ") || "(no caveats: everything)"
          const holderOk = Either.isRight(agent) && agent.right === g.right.holder
          const level: Level = exp !== undefined && exp <= now ? "fail" : !holderOk ? "warn" : "ok"
          const why = exp !== undefined && exp <= now ? "expired; " : !holderOk ? "held by another key; " : ""
          yield* say(level, what, `${why}${g.right.id} from ${g.right.principal}: ${scope}`)
        }
      }

      for (const url of o.urls) {
        const reached = yield* Effect.scoped(
          Effect.gen(function* () {
            const conn = yield* connect(url, { connectTimeoutMs: 5000, timeoutMs: 10_000 })
            const client = yield* makeClient(conn).pipe(Effect.provide(Layer.merge(Signer.fromSeed(new Uint8Array(32)), RandomBytes.live)))
            return yield* client.hello()
          })
        ).pipe(Effect.timeout("15 seconds"), Effect.either)
        if (Either.isLeft(reached)) yield* say("fail", url, "unreachable: " + (reached.left._tag === "TimeoutException" ? "no answer within 15 s" : `${reached.left.reason}: ${reached.left.message}`))
        else if (reached.right.kind !== "BRIEF") yield* say("fail", url, `answered ${reached.right.kind}, not BRIEF`)
        else yield* say("ok", url, `${reached.right.service.id} (${reached.right.capabilities.length} capabilities)`)
      }

      if (failed > 0) return yield* Effect.fail(cliError("mandate/doctor", `${failed} check${failed === 1 ? "" : "s"} failed`))
    })
  )
)

