// `mandate yea test-drive`: a newcomer's first run. The example shop is served in this process on
// loopback (yea://127.0.0.1, any free port), a throwaway principal grants a throwaway agent low-risk
// orders there up to 40.00 USD each for an hour, and the agent says HELLO, ASKs the menu, states an
// INTENT to order and COMMITs the first proposal (SPEC §4.1 to §4.4), each reply printed as the
// Lens an agent reads. Nothing is read from or written to the YEA home, and the service ends with
// the command. Exits 1, naming the reply's reason code, if a step does not answer as it should.
import { Command } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { exampleRuntime } from "../examples/runtime.js"
import { stateLayer } from "../app/yea-serve.js"
import { connectTcp } from "../bind/yea-tcp/client.js"
import { serveTcp } from "../bind/yea-tcp/server.js"
import { unixSeconds } from "../kernel/clock.js"
import { RandomBytes, Signer } from "../kernel/services.js"
import { makeClient } from "../yea/client.js"
import { SHOP_ID } from "../examples/shop.js"
import type { FinalReply } from "../yea/frame.js"
import { issueRootGrant } from "../yea/grant.js"
import { keyFromSeed } from "../yea/keys.js"
import { lensReplyHardened } from "../yea/lens/reply.js"
import { cliError, runCommand } from "./writ-io.js"

const ORDER = { items: [{ sku: "m01", qty: 1 }], deliver: "2026-12-05" }

const indent = (text: string) => text.split("\n").map((l) => `    ${l}`).join("\n")

/** The reply when it is of the kind the step expects, else the step's failure under its code. */
const expectKind = (step: string, kind: FinalReply["kind"], r: FinalReply) =>
  r.kind === kind
    ? Effect.succeed(r)
    : Effect.fail(cliError(r.kind === "ERROR" ? r.code : "bad_frame", r.kind === "ERROR" ? r.message : `answered ${r.kind}, not ${kind}`, step))

export const yeaTestDriveCommand = Command.make("test-drive", {}, () =>
  runCommand(
    Effect.scoped(
      Effect.gen(function* () {
        const random = yield* RandomBytes
        const principal = yield* random.bytes(32)
        const agent = yield* random.bytes(32)
        const trust = [keyFromSeed(principal)]
        const { url } = yield* serveTcp(yield* exampleRuntime("shop", trust), { port: 0, host: "127.0.0.1" })
        yield* Console.log(`The example shop is running at ${url} with a throwaway principal and agent key.`)
        const now = yield* unixSeconds
        const grant = yield* issueRootGrant({
          sub: keyFromSeed(agent),
          caveats: [{ svc: [SHOP_ID] }, { risk: "low" }, { each: { of: "spend", max: 4000, scale: 2, unit: "USD" } }, { exp: now + 3600 }]
        }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(principal), RandomBytes.live)))
        yield* Console.log("The principal grants the agent low-risk orders at shop.example, up to 40.00 USD each, for an hour.\n")
        const shop = yield* makeClient(yield* connectTcp(new URL(url)), { grants: [grant], agentName: "test-drive" }).pipe(
          Effect.provide(Layer.merge(Signer.fromSeed(agent), RandomBytes.live))
        )
        const step = (title: string, r: FinalReply) => Console.log(`> ${title}\n${indent(lensReplyHardened(r))}\n`)

        const brief = yield* expectKind("HELLO", "BRIEF", yield* shop.hello({ budget: 800 }))
        yield* step("HELLO: what the service is and what it can do", brief)
        const menu = yield* expectKind("ASK shop.search", "ANSWER", yield* shop.ask("shop.search", {}, { budget: 400 }))
        yield* step("ASK shop.search: a read; nothing changes", menu)
        const proposals = yield* expectKind("INTENT shop.order", "PROPOSALS", yield* shop.intent("shop.order", ORDER, { goal: "order lunch" }))
        yield* step("INTENT shop.order: proposals with their effects, cost and risk; still nothing changes", proposals)
        const chosen = proposals.kind === "PROPOSALS" ? proposals.proposals[0] : undefined
        if (chosen === undefined) return yield* Effect.fail(cliError("bad_frame", "the shop offered no proposal", "INTENT shop.order"))
        const receipt = yield* expectKind(`COMMIT ${chosen.id}`, "RECEIPT", yield* shop.commit(chosen))
        yield* step(`COMMIT ${chosen.id}: within the grant, so it runs and answers a receipt`, receipt)
        yield* Console.log("Next: `mandate yea init` for keys of your own, and `mandate yea demo` for consent, undo and limits.")
      }).pipe(
        Effect.provide(stateLayer()),
        Effect.provide(RandomBytes.live),
        Effect.mapError((e) => ("reason" in e ? cliError(e.reason, e.message, e.path) : cliError("unavailable", e.message)))
      )
    )
  )
)
