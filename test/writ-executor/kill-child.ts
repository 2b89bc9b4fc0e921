// Child process of the kill test: an executor on a SQLite file taking calls as fast as it can,
// printing each answer (and each recorded revoke) once it has it, until it is killed with SIGKILL.
// Usage: node BUNDLE FILE RUN (kill.test.ts bundles this file once, test/support/worker-bundle.ts)
import { Effect, Layer } from "effect"
import { encodeBase64url } from "../../src/kernel/base64url.js"
import * as SqliteWrit from "../../src/store/sqlite/writ-stores.js"
import { canonicalText, identity } from "../../src/writ/sign.js"
import type { StoreContext } from "../../src/writ/executor/scenario.js"
import { call, revoke, rig, settable, T0 } from "./fixtures.js"
import { A, AMOUNT, B, E, revocable, w1, w2 } from "./kill-shared.js"

const [file, runArg] = process.argv.slice(2)
const run = Number(runArg)
const clock = settable()
clock.set(T0)

const program = Effect.gen(function*() {
  const stores = yield* Layer.build(SqliteWrit.layer(file))
  const ex = yield* rig(stores as any, {
    executorKey: E,
    accept: [A],
    app: { perform: () => Effect.as(Effect.sleep("1 millis"), { st: "ok" as const, res: { run } }) }
  })
  yield* ex.recover
  process.stdout.write("READY\n")
  let n = 0
  const nextId = () => {
    const b = new Uint8Array(16)
    const v = new DataView(b.buffer)
    v.setUint32(0, run)
    v.setUint32(4, ++n)
    return encodeBase64url(b)
  }
  // Worker 0 revokes after its first call of the run and then after every fifth of its own, so
  // every run that answers a call also records revokes (however slow the machine is).
  let own = 0
  const worker = (w: number) =>
    Effect.forever(Effect.gen(function*() {
      const c = call(B, [w1, w2], "pay/x", { amount: AMOUNT }, nextId())
      const answer = yield* ex.call(c)
      if (answer._tag === "tally") process.stdout.write(`ANSWER ${c.id} ${canonicalText(answer.tally)}\n`)
      if (w === 0 && own++ % 5 === 0) {
        const r = revocable(run)
        const rv = yield* ex.revoke(revoke(B, [w1, r]))
        if (rv._tag === "recorded") process.stdout.write(`REVOKED ${identity(r)}\n`)
      }
    }))
  yield* Effect.all([worker(0), worker(1), worker(2), worker(3)], { concurrency: "unbounded" })
}).pipe(Effect.scoped, Effect.withClock(clock.clock))

Effect.runPromise(program).catch((e) => {
  process.stderr.write(String(e) + "\n")
  process.exit(2)
})
