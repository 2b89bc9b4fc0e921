// The variables of docs/cli.md "Environment" read before the MANDATE_ names, through Config (the
// run's own environment, never the process's): YEA_HOME and YEA_PRINCIPAL_HOME for the keys, the
// default home ~/.yea under HOME and the old default ~/.mandate read (with a notice) when alone,
// YEA_TRUST (else your own principal key) for what a served service trusts; and the OpenAPI
// document read from a loopback URL. In process, temp folders only.
import { NodeContext } from "@effect/platform-node"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { existsSync, mkdtempSync, readFileSync, renameSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { exampleRuntime } from "../../src/examples/runtime.js"
import { serveOn, stateLayer } from "../../src/app/yea-serve.js"
import { trustOf } from "../../src/cli/yea-local.js"
import { MAX_SPEC, readSpec } from "../../src/cli/yea-openapi-source.js"
import { runCli } from "../support/cli.js"
import { AGENT, PRINCIPAL, agentKey, principalKey } from "../yea/_helpers.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { writeSeed } from "./run.js"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
const shop = Effect.flatMap(exampleRuntime("shop", []), (rt) => serveOn(rt, { _tag: "tcp", port: 0 })).pipe(Effect.provide(stateLayer()), Effect.orDie)
const clean = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { NO_COLOR: "1", PATH: process.env.PATH, ...extra }
  return env
}

describe("YEA_HOME and YEA_PRINCIPAL_HOME", () => {
  it("init puts the keys where the YEA_ names say; YEA_ wins over MANDATE_ when both are set; MANDATE_ alone still works", async () => {
    const root = mkdtempSync(join(tmpdir(), "yea-env-"))
    const r = await runCli(["yea", "init"], { env: clean({ HOME: join(root, "home"), YEA_HOME: join(root, "agent"), YEA_PRINCIPAL_HOME: join(root, "principal") }) })
    expect(r.status).toBe(0)
    expect(existsSync(join(root, "agent", "agent.key"))).toBe(true)
    expect(existsSync(join(root, "principal", "principal.key"))).toBe(true)
    expect(existsSync(join(root, "home"))).toBe(false)
    const both = await runCli(["yea", "init"], {
      env: clean({ HOME: join(root, "home"), YEA_HOME: join(root, "yea"), MANDATE_HOME: join(root, "mandate"), YEA_PRINCIPAL_HOME: join(root, "yp"), MANDATE_PRINCIPAL_HOME: join(root, "mp") })
    })
    expect(both.status).toBe(0)
    expect(existsSync(join(root, "yea", "agent.key"))).toBe(true)
    expect(existsSync(join(root, "yp", "principal.key"))).toBe(true)
    expect(existsSync(join(root, "mandate"))).toBe(false)
    expect(existsSync(join(root, "mp"))).toBe(false)
    const old = await runCli(["yea", "init", "--agent-only"], { env: clean({ HOME: join(root, "home"), MANDATE_HOME: join(root, "m2") }) })
    expect(old.status).toBe(0)
    expect(existsSync(join(root, "m2", "agent.key"))).toBe(true)
    expect(existsSync(join(root, "home"))).toBe(false)
  })

  it("with no variable, init, add and whoami use ~/.yea under HOME, and say nothing about an old home", async () => {
    const home = mkdtempSync(join(tmpdir(), "yea-default-"))
    const env = clean({ HOME: home })
    const init = await runCli(["yea", "init"], { env })
    expect(init.status, init.stderr).toBe(0)
    expect(existsSync(join(home, ".yea", "agent.key"))).toBe(true)
    expect(existsSync(join(home, ".yea", "principal.key"))).toBe(true)
    expect(init.stdout).toContain(join(home, ".yea", "agent.key"))
    const url = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const url = yield* shop
      return yield* Effect.promise(() => runCli(["yea", "add", url], { env }))
    })))
    expect(url.status, url.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(home, ".yea", "services.json"), "utf8"))).toEqual([expect.objectContaining({ id: "shop.example" })])
    const who = await runCli(["yea", "whoami"], { env })
    expect(who.status).toBe(0)
    expect(who.stdout).toMatch(/agent key: {5}ed25519:/)
    expect(who.stdout).toContain(join(home, ".yea"))
    expect(existsSync(join(home, ".mandate"))).toBe(false)
    expect(init.stderr + url.stderr + who.stderr).not.toContain("old default")
  }, 60_000)

  it("reads the old default ~/.mandate when it alone exists, with one notice line per run saying how to move it; ~/.yea wins once it exists", async () => {
    const home = mkdtempSync(join(tmpdir(), "yea-old-"))
    writeSeed(join(home, ".mandate"), "agent.key", PRINCIPAL)
    const env = clean({ HOME: home })
    const who = await runCli(["yea", "whoami"], { env })
    expect(who.status).toBe(0)
    expect(who.stdout).toContain(`agent key:     ${principalKey}`)
    const notices = who.stderr.split("\n").filter((l) => l.startsWith("notice:"))
    expect(notices).toEqual([`notice: reading the YEA home from ${join(home, ".mandate")}, the old default; the default is now ~/.yea: move it with \`mv ${join(home, ".mandate")} ${join(home, ".yea")}\` (or set YEA_HOME=${join(home, ".mandate")})`])
    // A key made now lands beside the old one, not in a second home.
    const grant = await runCli(["yea", "init"], { env })
    expect(grant.status, grant.stderr).toBe(0)
    expect(existsSync(join(home, ".mandate", "principal.key"))).toBe(true)
    expect(existsSync(join(home, ".yea"))).toBe(false)
    // Moved as the notice says: the new default is read, and nothing is said.
    renameSync(join(home, ".mandate"), join(home, ".yea"))
    const moved = await runCli(["yea", "whoami"], { env })
    expect(moved.stdout).toContain(`agent key:     ${principalKey}`)
    expect(moved.stderr).not.toContain("notice:")
    // Both present: ~/.yea is the home, the old one is not read.
    writeSeed(join(home, ".mandate"), "agent.key", AGENT)
    const both = await runCli(["yea", "whoami"], { env })
    expect(both.stdout).toContain(`agent key:     ${principalKey}`)
    expect(both.stderr).not.toContain("notice:")
    // A variable wins over both, with no notice.
    const named = await runCli(["yea", "whoami"], { env: clean({ HOME: home, YEA_HOME: join(home, ".mandate") }) })
    expect(named.stdout).toContain(`agent key:     ${agentKey}`)
    expect(named.stderr).not.toContain("notice:")
  })
})

describe("YEA_TRUST", () => {
  const run = <A, E>(env: Record<string, string>, eff: Effect.Effect<A, E, NodeContext.NodeContext>) => eff.pipe(withEnv(env), Effect.provide(NodeContext.layer))
  const other = agentKey
  it.effect("--trust wins; else YEA_TRUST's comma-separated keys; else your own principal key; a bad key is refused by name", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "yea-trust-"))
      writeSeed(join(root, "p"), "principal.key", PRINCIPAL)
      const env = { HOME: root, YEA_HOME: join(root, "a"), YEA_PRINCIPAL_HOME: join(root, "p") }
      expect(yield* run({ ...env, YEA_TRUST: other }, trustOf([principalKey]))).toEqual([principalKey])
      expect(yield* run({ ...env, YEA_TRUST: ` ${other}, ${principalKey} ` }, trustOf([]))).toEqual([other, principalKey])
      expect(yield* run(env, trustOf([]))).toEqual([principalKey])
      expect(yield* run({ HOME: root, YEA_HOME: join(root, "nobody") }, trustOf([]))).toEqual([])
      const bad = yield* Effect.flip(run({ ...env, YEA_TRUST: "alice" }, trustOf([])))
      expect([bad.reason, bad.path]).toEqual(["invalid_params", "YEA_TRUST"])
    }))
})

describe("the OpenAPI document from a URL", () => {
  const serve = (handler: (path: string) => { status: number; body: string | Buffer }) =>
    Effect.acquireRelease(
      Effect.async<{ url: string; close: () => void }>((resume) => {
        const server = createServer((req, res) => {
          const r = handler(req.url ?? "/")
          res.writeHead(r.status, { "content-type": "application/json" })
          res.end(r.body)
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })))
      }),
      (s) => Effect.sync(() => s.close())
    )
  const read = (source: string) => readSpec(source).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(NodeContext.layer))

  it.scoped("a JSON document is read; a non-2xx status, a body that is not JSON and one past the cap are refused by name", () =>
    Effect.gen(function* () {
      const big = Buffer.alloc(MAX_SPEC + 10, 0x20)
      const s = yield* serve((path) =>
        path === "/spec.json" ? { status: 200, body: JSON.stringify({ openapi: "3.0.0" }) } : path === "/text" ? { status: 200, body: "<html>" } : path === "/big" ? { status: 200, body: big } : { status: 404, body: "no" }
      )
      expect(yield* read(`${s.url}/spec.json`)).toEqual({ openapi: "3.0.0" })
      const reasons = yield* Effect.forEach(["/missing", "/text", "/big"], (p) => Effect.map(Effect.flip(read(`${s.url}${p}`)), (e) => e.reason))
      expect(reasons).toEqual(["mandate/unreachable", "mandate/bad_spec", "mandate/bad_spec"])
      expect((yield* Effect.flip(read(join(tmpdir(), "no-such-spec.json")))).reason).toBe("mandate/unreadable")
    }))
})

describe("mandate yea whoami", () => {
  it("shows the agent key, warns when the principal key is here, and says when there is no key", async () => {
    const root = mkdtempSync(join(tmpdir(), "yea-whoami-"))
    writeSeed(join(root, "a"), "agent.key", PRINCIPAL)
    writeSeed(join(root, "a"), "principal.key", PRINCIPAL)
    const both = await runCli(["yea", "whoami"], { env: clean({ HOME: root, YEA_HOME: join(root, "a") }) })
    expect(both.status).toBe(0)
    expect(both.stdout).toContain(`agent key:     ${principalKey}`)
    expect(both.stdout).toContain("grants:        0 saved")
    expect(both.stderr).toContain("warning: the principal key is readable here")
    const none = await runCli(["yea", "whoami"], { env: clean({ HOME: root, YEA_HOME: join(root, "empty"), YEA_PRINCIPAL_HOME: join(root, "elsewhere") }) })
    expect(none.status).toBe(0)
    expect(none.stdout).toContain("agent key:     none (mandate/no_key)")
    expect(none.stdout).toContain("principal key: not on this machine")
    expect(none.stderr).toBe("")
  })
})
