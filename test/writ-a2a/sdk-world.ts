// The Writ world the A2A SDK tests share (sdk.integration.test.ts, rest.integration.test.ts): keys
// made and objects signed by the CLI, as a user makes them, in a temporary directory.
import { Task as SdkTask } from "@a2a-js/sdk"
import { Effect, Either, Layer, ManagedRuntime, Schema } from "effect"
import { NodeHttpClient } from "@effect/platform-node"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { plainExecutor } from "../../src/app/plain-executor.js"
import { Task } from "../../src/bind/writ-a2a/schema.js"
import { application as payment } from "../../src/examples/payment.js"
import type { JsonObject } from "../../src/kernel/json.js"
import { Application } from "../../src/writ/executor/services.js"
import { runCli, spawnMandate } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"

export const dir = mkdtempSync(join(tmpdir(), "mandate-a2a-sdk-"))
export const at = (name: string) => join(dir, name)
const readObject = (name: string) => JSON.parse(readFileSync(at(name), "utf8")) as JsonObject

export const cli = async (...args: Array<string>) => {
  const r = await runCli(args)
  if (r.status !== 0) throw new Error(`mandate ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}
const didOf = (out: string) => out.match(/did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+/)![0]

/** Keys A (root) and C (executor); a grant from A to C; calls of A under it; a revoke of it. */
export const world = async (prefix: string) => {
  const A = didOf(await cli("keygen", at(`${prefix}a.key`)))
  const C = didOf(await cli("keygen", at(`${prefix}c.key`)))
  await cli("writ", "issue", "--key", at(`${prefix}a.key`), "--hld", C, "--act", "travel", "--max", "amount=60000", "--set", "currency=USD", "--ttl", "3600", "--out", at(`${prefix}grant.json`))
  // A second grant that allows one use: its second call is refused, signed (count_exhausted).
  await cli("writ", "issue", "--key", at(`${prefix}a.key`), "--hld", C, "--act", "travel", "--max", "amount=60000", "--count", "uses=1", "--ttl", "3600", "--out", at(`${prefix}once.json`))
  // A third, for the 0.3 client, revoked on its own.
  await cli("writ", "issue", "--key", at(`${prefix}a.key`), "--hld", C, "--act", "travel", "--max", "amount=60000", "--ttl", "3600", "--out", at(`${prefix}other.json`))
  const call = async (name: string, amount: number, chain = "grant.json") => {
    await cli("writ", "call", "--key", at(`${prefix}a.key`), "--chain", at(`${prefix}${chain}`), "--op", "travel/charge", "--args", JSON.stringify({ amount, currency: "USD" }), "--out", at(`${prefix}${name}`))
    return readObject(`${prefix}${name}`)
  }
  const calls = {
    one: await call("one.json", 58900),
    two: await call("two.json", 1200, "other.json"),
    first: await call("first.json", 10, "once.json"),
    over: await call("over.json", 20, "once.json"),
    after: await call("after.json", 100)
  }
  await cli("writ", "revoke", "--key", at(`${prefix}a.key`), "--chain", at(`${prefix}grant.json`), "--out", at(`${prefix}revoke.json`))
  await cli("writ", "revoke", "--key", at(`${prefix}a.key`), "--chain", at(`${prefix}other.json`), "--out", at(`${prefix}revoke-other.json`))
  return { A, C, calls, revoke: readObject(`${prefix}revoke.json`), revokeOther: readObject(`${prefix}revoke-other.json`), seedFile: at(`${prefix}c.key`) }
}

export const run = <A, E>(eff: Effect.Effect<A, E, never>) => Effect.runPromise(Effect.either(eff))
export const http = NodeHttpClient.layerUndici
export const reasonOf = (e: Either.Either<unknown, { readonly reason: string }>) => (Either.isLeft(e) ? e.left.reason : "accept")

/** The 1.0 SDK's task as 1.0 JSON, read with the binding's Schema. */
export const fromSdk = (task: SdkTask) => Schema.decodeUnknownSync(Task)(SdkTask.toJSON(task))

/** The executor of C, in memory, for an SDK server to run calls through. */
export const executorRuntime = (w: Awaited<ReturnType<typeof world>>) =>
  ManagedRuntime.make(plainExecutor({
    seed: new Uint8Array(Buffer.from(readFileSync(w.seedFile, "utf8").trim(), "hex")),
    application: Layer.succeed(Application, payment),
    roots: [w.A]
  }))


/** `mandate writ a2a-serve` as a process on a free port, with C's key and a SQLite store; its base URL. */
export const spawnA2aServe = async (w: Awaited<ReturnType<typeof world>>, prefix: string, more: ReadonlyArray<string> = []) => {
  const child = spawnMandate([
    "writ", "a2a-serve", "--port", "0", "--key", w.seedFile, "--root", w.A, "--store", at(`${prefix}c.sqlite`),
    "--handler", join(repoRoot, "src/examples/payment.ts"), "--bound", "amount", ...more
  ])
  const ready = await new Promise<{ card: string; did: string }>((resolve, reject) => {
    let out = ""
    let err = ""
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n").find((l) => l.startsWith("{") && l.endsWith("}"))
      if (line !== undefined) resolve(JSON.parse(line))
    })
    child.on("exit", (code) => reject(new Error(`a2a-serve exited (${code}): ${err}`)))
  })
  return { child, did: ready.did, base: ready.card.replace("/.well-known/agent-card.json", "") }
}

/** Stops a process `spawnA2aServe` started. */
export const stop = async (child: ChildProcess | undefined) => {
  if (child === undefined || child.exitCode !== null) return
  child.removeAllListeners("exit")
  await new Promise<void>((resolve) => {
    child.on("exit", () => resolve())
    child.kill("SIGTERM")
  })
}
