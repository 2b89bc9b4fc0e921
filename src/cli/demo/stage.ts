// The demo's stage: three keys, the executors B and C on loopback, and the helpers every act uses
// (POST with the exchange saved, the check of a signed refusal). Each act (acts.ts, refusals.ts,
// revoke-act.ts, audit-act.ts) takes the Stage and the results of the acts before it.
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Either, Layer, Option } from "effect"
import { createServer } from "node:net"
import { resolve } from "node:path"
import { postWrit } from "../../bind/writ-http/client.js"
import { isJsonObject, type Json, type JsonObject } from "../../kernel/json.js"
import { RandomBytes, Signer } from "../../kernel/services.js"
import * as Writ from "../../writ/index.js"
import { cliError, didOfSeed, writeKeyFile } from "../writ-io.js"
import { exampleModule } from "../self.js"
import { startExecutor } from "./procs.js"
import type { Transcript } from "./transcript.js"

export const str = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))
export const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {})
export const reasonOf = (tally: JsonObject): string | null =>
  isJsonObject(tally.err) && typeof tally.err.code === "string" ? tally.err.code : null

/** An answer as the demo keeps it: status, parsed JSON (or the raw text), and the exact bytes. */
export interface Answer {
  readonly status: number
  readonly json: Json
  readonly bytes: Uint8Array
}

/** A running executor as the acts address it. */
export interface Peer {
  readonly url: string
}

type AsParty = <X, E>(e: Effect.Effect<X, E, Signer | RandomBytes>) => Effect.Effect<X, E>

export interface Stage {
  readonly t: Transcript
  readonly out: string
  readonly A: string
  readonly B: string
  readonly C: string
  readonly asA: AsParty
  readonly asB: AsParty
  readonly bx: Peer
  readonly cx: Peer
  /** The bounds of writ_1 and of the later roots to B (section 3). */
  readonly bookingBounds: Writ.Bounds
  /** A booking's arguments, admitted by bookingBounds. */
  readonly bookArgs: JsonObject
}

/** A port the system gave out a moment ago, for a child that takes a port number, not 0. */
export const freePort = Effect.async<number>((resume) => {
  const s = createServer()
  s.listen(0, "127.0.0.1", () => {
    const a = s.address()
    const port = typeof a === "object" && a !== null ? a.port : 0
    s.close(() => resume(Effect.succeed(port)))
  })
})

/** Keys for A, B and C in owner-only key files; C and B started as `writ serve` processes (scoped). */
export const setUp = (t: Transcript, out: string, cHandler?: string, ledger?: string) =>
  Effect.gen(function*() {
    const random = yield* RandomBytes
    const seeds = { a: yield* random.bytes(32), b: yield* random.bytes(32), c: yield* random.bytes(32) }
    for (const [n, s] of Object.entries(seeds)) yield* writeKeyFile(`${out}/keys/${n}.key`, s)
    const A = didOfSeed(seeds.a)
    const B = didOfSeed(seeds.b)
    const C = didOfSeed(seeds.c)
    const keysOf = (seed: Uint8Array) => Layer.merge(Signer.fromSeed(seed), RandomBytes.live)
    const asA: AsParty = (e) => Effect.provide(e, keysOf(seeds.a))
    const asB: AsParty = (e) => Effect.provide(e, keysOf(seeds.b))

    yield* t.step("Setup: three agents, three keys, two executors on loopback")
    yield* t.log(`  A (delegator) ${A}`)
    yield* t.log(`  B (booking)   ${B}`)
    yield* t.log(`  C (payment)   ${C}`)
    const cPort = yield* freePort
    const [cx, bx] = yield* Effect.all([
      startExecutor({
        name: "C", key: `${out}/keys/c.key`, store: `${out}/c.sqlite`, handler: cHandler === undefined ? exampleModule("payment") : resolve(cHandler), roots: [A],
        act: ["travel/charge"], port: cPort, env: { MANDATE_DEMO_SIGNAL_DIR: `${out}/signals` },
        ...(ledger === undefined ? {} : { ledger })
      }),
      startExecutor({
        name: "B", key: `${out}/keys/b.key`, store: `${out}/b.sqlite`, handler: exampleModule("booking"), roots: [A],
        act: ["travel"], forward: { [C]: `http://127.0.0.1:${cPort}/writ` },
        env: { MANDATE_DEMO_KEY: `${out}/keys/b.key`, MANDATE_DEMO_C_URL: `http://127.0.0.1:${cPort}/writ`, MANDATE_DEMO_C_DID: C },
        ...(ledger === undefined ? {} : { ledger })
      })
    ], { concurrency: 2 }).pipe(Effect.mapError((e) => cliError("mandate/demo_process", e.message)))
    yield* t.log(`  B listens at ${bx.url} (pid ${bx.pid}), store out/b.sqlite`)
    yield* t.log(`  C listens at ${cx.url} (pid ${cx.pid}), store out/c.sqlite`)
    if (ledger !== undefined) yield* t.log(`  B and C record every decision in the ledger ${ledger}`)
    yield* t.expect("each executor runs under the key it was given", bx.did === B && cx.did === C)
    const stage: Stage = {
      t, out, A, B, C, asA, asB, bx, cx,
      bookingBounds: {
        act: { t: "prefix", v: "travel" },
        amount: { t: "max", v: 60000 },
        currency: { t: "set", v: ["USD"] },
        uses: { t: "count", v: 1 },
        fare: { t: "set", v: ["refundable"] },
        date: { t: "window", v: [20261015, 20261019] }
      },
      bookArgs: { amount: 58900, currency: "USD", fare: "refundable", date: 20261015, pnr: "K7Q2ZD" }
    }
    return stage
  })

/** POSTs an object, saving it and the answer. */
export const post = (s: Stage, to: Peer, name: string, body: JsonObject) =>
  Effect.gen(function*() {
    yield* s.t.save(name, body)
    const a = yield* postWrit(to.url, body, { timeout: Duration.seconds(60) }).pipe(
      Effect.mapError((e) => cliError("mandate/unreachable", e.message, to.url))
    )
    const json = Option.getOrElse(a.json, () => ({ unparsed: new TextDecoder().decode(a.bytes) }) as Json)
    yield* s.t.save(`${name}-answer`, json)
    const answer: Answer = { status: a.status, json, bytes: a.bytes }
    return answer
  })

/** A refusal: the answer is a `failed` tally naming `reason`, signed by the executor that received the call. */
export const expectSignedRefusal = (s: Stage, label: string, call: JsonObject, answer: Answer, reason: string, signer: string) =>
  Effect.gen(function*() {
    const tally = obj(obj(answer.json).tally)
    const sig = yield* Effect.either(Writ.verifyTallyObject(tally, signer))
    const ok = answer.status === 200 && tally.st === "failed" && reasonOf(tally) === reason && Either.isRight(sig) &&
      tally.call === Writ.identity(call)
    yield* s.t.expect(
      `${label}: signed refusal, st failed, reason ${reason}`,
      ok,
      ok ? `signed by ${signer === s.B ? "B" : signer === s.C ? "C" : signer}, names this call` : `got status ${answer.status}, ${str(answer.json).slice(0, 160)}`
    )
  })

/** Removes what a previous run left in the output folder (only the demo's own kinds of file). */
export const prepareOut = (out: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (yield* fs.exists(out)) {
      for (const f of yield* fs.readDirectory(out)) {
        if (/\.(json|jsonl|txt|sqlite|sqlite-wal|sqlite-shm)$/.test(f) || f === "keys" || f === "signals") {
          yield* fs.remove(`${out}/${f}`, { recursive: true })
        }
      }
    }
    yield* fs.makeDirectory(`${out}/keys`, { recursive: true })
    yield* fs.makeDirectory(`${out}/signals`, { recursive: true })
  }).pipe(Effect.mapError((e) => cliError("mandate/unwritable", String(e), out)))
