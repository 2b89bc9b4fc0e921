// `mandate yea openapi --preset github --base URL` as a person runs it, a process of its own: the
// shipped GitHub preset served on yea:// (loopback) against a fake GitHub on loopback
// (fake-upstream.ts). With GITHUB_TOKEN in its environment the token is sent upstream as a bearer
// header and the command says it sends GITHUB_TOKEN (never its value); without it no authorization
// header goes upstream and the command says the variable is not set. The BRIEF lists the 16
// operations, an answer is projected, and the token is in nothing the agent receives.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { connect } from "../../src/bind/yea-connect/index.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { lensReplyHardened } from "../../src/yea/lens/reply.js"
import { cliEntry } from "../support/cli.js"
import { repoRoot } from "../support/shared.js"
import { githubRoutes, startFake } from "./fake-upstream.js"

const principalSeed = new Uint8Array(32).fill(1)
const agentSeed = new Uint8Array(32).fill(2)
const TOKEN = "ghp_cli_token_never_shown_9876543210"

const serve = (base: string, token: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ url: string; stderr: () => string; kill: () => void }>((resolve, reject) => {
          const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
          delete env.GITHUB_TOKEN
          if (token !== undefined) env.GITHUB_TOKEN = token
          const args = [...cliEntry, "yea", "openapi", "--preset", "github", "--base", base, "--port", "0", "--trust", keyFromSeed(principalSeed)]
          const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "ignore", "pipe"] })
          let err = ""
          const timer = setTimeout(() => reject(new Error(`did not start: ${err}`)), 60_000)
          child.stderr.on("data", (c: Buffer) => {
            err += c.toString()
            const m = /serving api\.github\.com \(16 capabilities\) at (\S+)\n.*preset github: [^\n]*\n/.exec(err)
            if (m) {
              clearTimeout(timer)
              resolve({ url: m[1], stderr: () => err, kill: () => child.kill() })
            }
          })
        })
    ),
    (s) => Effect.sync(() => s.kill())
  )

const agent = (url: string) =>
  Effect.gen(function* () {
    const grant = yield* issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: ["api.github.com"] }, { can: ["github.*"] }, { risk: "low" }] }).pipe(
      Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.live))
    )
    return yield* makeClient(yield* connect(url), { grants: [grant] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(agentSeed), RandomBytes.live)))
  })

describe("mandate yea openapi --preset github", () => {
  it.live("with GITHUB_TOKEN: 16 operations, a projected answer, the token sent upstream as a bearer header and shown nowhere", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const up = yield* Effect.acquireRelease(Effect.promise(() => startFake(githubRoutes)), (s) => Effect.promise(s.close))
        const s = yield* serve(up.base, TOKEN)
        expect(s.stderr()).toContain("preset github: sending GITHUB_TOKEN (as the authorization header)")
        expect(s.stderr()).not.toContain(TOKEN)
        const client = yield* agent(s.url)
        const brief = yield* client.hello()
        expect(brief.kind === "BRIEF" && brief.capabilities.length).toBe(16)
        const list = yield* client.ask("github.issues_list_for_repo", { owner: "octo", repo: "demo", per_page: 1 })
        expect(list.kind === "ANSWER" && list.data).toEqual([{ number: 3, title: "Terminal wraps badly", state: "open", author: "ana", labels: ["bug"], comments: 2, updated_at: "2026-11-02T10:00:00Z" }])
        const merge = yield* client.intent("github.pulls_merge", { owner: "octo", repo: "demo", pull_number: 42 })
        expect(merge.kind).toBe("PROPOSALS")
        expect(up.seen.map((r) => `${r.method} ${r.url} ${r.headers.authorization}`)).toEqual([`GET /repos/octo/demo/issues?per_page=1 Bearer ${TOKEN}`])
        expect([brief, list, merge].map((r) => lensReplyHardened(r)).join("\n")).not.toContain(TOKEN)
      })
    ), { timeout: 120_000 })

  it.live("without GITHUB_TOKEN: it says so and sends no authorization header", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const up = yield* Effect.acquireRelease(Effect.promise(() => startFake(githubRoutes)), (s) => Effect.promise(s.close))
        const s = yield* serve(up.base, undefined)
        expect(s.stderr()).toContain("preset github: GITHUB_TOKEN not set, so calls go without it")
        const client = yield* agent(s.url)
        yield* client.hello()
        expect((yield* client.ask("github.repos_get", { owner: "octo", repo: "demo" })).kind).toBe("ERROR") // the fake has no such route: 404
        expect(up.seen.map((r) => [r.url, r.headers.authorization])).toEqual([["/repos/octo/demo", undefined]])
      })
    ), { timeout: 120_000 })
})
