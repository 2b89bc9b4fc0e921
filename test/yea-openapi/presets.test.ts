// `mandate yea openapi --preset github|petstore` (reference openapi.md "Presets"), in process: each
// preset's shipped document narrowed to its allow-list with its risks, served against a fake
// upstream on loopback (fake-upstream.ts) through the same fetch Layer the command uses. A list, a
// read with its projection applied, a write that is a proposal sending nothing, never
// auto-committed, and over a `low` ceiling committed only with the person's consent; the
// credential read from the environment sent upstream only when its variable is set, and never in
// what the model reads (the hardened Lens). An unknown preset and a command with neither a
// document nor a preset are refused by name.
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { stateLayer } from "../../src/app/yea-serve.js"
import { upstreamLayer } from "../../src/bind/yea-openapi/index.js"
import { presetCredentials, resolvePreset } from "../../src/cli/yea-openapi-preset.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import { issueConsentGrant } from "../../src/yea/consent.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { lensReplyHardened } from "../../src/yea/lens/reply.js"
import { fromOpenAPI, operations } from "../../src/yea/openapi/index.js"
import type { Preset } from "../../src/yea/openapi/preset.js"
import { PRESETS } from "../../src/yea/openapi/presets/index.js"
import { makeService } from "../../src/yea/service/runtime.js"
import { runCli } from "../support/cli.js"
import { githubRoutes, petstoreRoutes, type Route, startFake } from "./fake-upstream.js"

const principalSeed = new Uint8Array(32).fill(1)
const agentSeed = new Uint8Array(32).fill(2)
const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([3])))
const TOKEN = "ghp_test_token_never_shown_0123456789"

type Reply = { readonly kind: string; readonly code?: string; readonly data?: unknown; readonly proposals?: ReadonlyArray<{ id: string; hash: string; risk: string }> }

/** The preset served against a fake upstream at `base`, with the credentials `env` gives, and an agent holding a `low` grant. */
const setup = (preset: Preset, route: Route, env: Record<string, string>, basePath = "") =>
  Effect.acquireRelease(Effect.promise(() => startFake(route)), (s) => Effect.promise(s.close)).pipe(
    Effect.flatMap((up) =>
      Effect.gen(function* () {
        const creds = yield* presetCredentials(preset).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
        const spec = fromOpenAPI(preset.spec, { base: up.base + basePath, id: preset.id, prefix: preset.prefix, operations: preset.operations, trust: [keyFromSeed(principalSeed)] })
        const service = yield* makeService(spec).pipe(Effect.provide(upstreamLayer({ headers: creds.headers })))
        const grant = yield* issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: [preset.id] }, { can: [`${preset.prefix}.*`] }, { risk: "low" }] }).pipe(Effect.provide(principal))
        const client = yield* makeClient(connectInProcess(service), { grants: [grant] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(agentSeed), RandomBytes.live)))
        const brief = yield* client.hello()
        return { up, client, spec, brief, used: creds.used }
      })
    ),
    Effect.provide(stateLayer())
  )

describe("the presets' documents and allow-lists", () => {
  it("every allow-listed operation is in the shipped document; github has the 16 of the reference table with their risks", () => {
    for (const preset of Object.values(PRESETS)) {
      const ids = operations(preset.spec, preset.prefix).map((o) => o.operationId)
      expect(Object.keys(preset.operations).filter((id) => !ids.includes(id)), preset.name).toEqual([])
    }
    const gh = fromOpenAPI(PRESETS.github.spec, { trust: [], prefix: "github", operations: PRESETS.github.operations })
    const caps = Object.entries(gh.capabilities).map(([name, c]) => `${name} ${c.kind === "intent" ? c.risk : "read"}`)
    expect(caps.length).toBe(16)
    expect(caps.filter((c) => c.endsWith(" read")).length).toBe(10)
    expect(caps.filter((c) => !c.endsWith(" read")).sort()).toEqual([
      "github.issues_add_labels low",
      "github.issues_create low",
      "github.issues_create_comment low",
      "github.issues_update low",
      "github.pulls_create medium",
      "github.pulls_merge high"
    ])
    // Arrays of a base type are `base[]` (SPEC §4.1.1), arrays of objects `[{...}]`.
    const ops = operations(PRESETS.github.spec, "github")
    expect(ops.find((o) => o.operationId === "issues/add-labels")?.params).toEqual({ owner: "string — the account that owns the repository", repo: "string — the repository's name, without .git", issue_number: "int — the issue's (or pull request's) number", body: { "labels": "string[]" } })
    const pet = operations(PRESETS.petstore.spec, "petstore").find((o) => o.operationId === "addPet")?.params as { body: Record<string, unknown> }
    expect([pet.body["photoUrls"], pet.body["tags?"]]).toEqual(["string[]", [{ "id?": "int", "name?": "string" }]])
    // The document's own servers are the default base, and the preset's id names the service.
    expect(new URL((PRESETS.github.spec as { servers: Array<{ url: string }> }).servers[0].url).host).toBe(PRESETS.github.id)
  })

  it("an operation of the document outside the allow-list is not served", () => {
    const only = fromOpenAPI(PRESETS.github.spec, { trust: [], prefix: "github", operations: { "repos/get": {} } })
    expect(Object.keys(only.capabilities)).toEqual(["github.repos_get"])
  })
})

describe("--preset github against a fake GitHub on loopback", () => {
  it.scoped("lists issues projected to the fields a model needs; search projects its items; the token goes upstream and never into the Lens", () =>
    Effect.gen(function* () {
      const { up, client, brief, used } = yield* setup(PRESETS.github, githubRoutes, { GITHUB_TOKEN: TOKEN })
      expect(used).toEqual(["GITHUB_TOKEN"])
      const list = (yield* client.ask("github.issues_list_for_repo", { owner: "octo", repo: "demo", state: "open", per_page: 2 })) as Reply
      expect(list.kind).toBe("ANSWER")
      expect(list.data).toEqual([
        { number: 3, title: "Terminal wraps badly", state: "open", author: "ana", labels: ["bug"], comments: 2, updated_at: "2026-11-02T10:00:00Z" },
        { number: 2, title: "Add a toggle", state: "open", author: "bo", labels: [], comments: 2, updated_at: "2026-11-02T10:00:00Z" }
      ])
      expect(up.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["GET /repos/octo/demo/issues?state=open&per_page=2"])
      const one = (yield* client.ask("github.issues_get", { owner: "octo", repo: "demo", issue_number: 3 })) as Reply
      expect(Object.keys(one.data as object).sort()).toEqual(["author", "body", "comments", "created_at", "labels", "number", "state", "title", "updated_at"])
      const found = (yield* client.ask("github.search_issues_and_pull_requests", { q: "repo:octo/demo toggle" })) as Reply
      expect(found.data).toEqual([{ number: 2, title: "Add a toggle", state: "open", author: "bo", repository: "https://api.github.test/repos/octo/demo", updated_at: "2026-11-02T10:00:00Z" }])
      // A file path keeps its `/` (x-multi-segment), each segment encoded; `..` is refused before anything is sent.
      const file = (yield* client.ask("github.repos_get_content", { owner: "octo", repo: "demo", path: "src/a b.ts" })) as Reply
      expect(file.data).toEqual({ type: "file", path: "src/a b.ts", size: 4, sha: "abc", encoding: "base64", content: "eCA9IDEK", name: "a b.ts" })
      const escape = (yield* client.ask("github.repos_get_content", { owner: "octo", repo: "demo", path: "../../../user" })) as Reply
      expect(escape.kind === "ERROR" && escape.code).toBe("invalid_params")
      expect(up.seen.map((s) => s.headers.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `Bearer ${TOKEN}`])
      const shown = [brief, list, one, found, file].map((r) => lensReplyHardened(r as never)).join("\n")
      expect(shown).toContain("Terminal wraps badly")
      expect(shown).not.toContain(TOKEN)
      expect(shown).not.toContain("avatar_url")
    }), { timeout: 60_000 })

  it.scoped("without GITHUB_TOKEN no authorization header is sent at all", () =>
    Effect.gen(function* () {
      const { up, client, used } = yield* setup(PRESETS.github, githubRoutes, { GITHUB_TOKEN_OTHER: TOKEN })
      expect(used).toEqual([])
      expect(((yield* client.ask("github.issues_list_for_repo", { owner: "octo", repo: "demo" })) as Reply).kind).toBe("ANSWER")
      expect(up.seen.length).toBe(1)
      expect(up.seen[0].headers.authorization).toBeUndefined()
    }), { timeout: 60_000 })

  it.scoped("a merge (risk high) is a proposal that sends nothing, never auto-committed; over a low grant it needs consent, then merges once", () =>
    Effect.gen(function* () {
      const { up, client } = yield* setup(PRESETS.github, githubRoutes, { GITHUB_TOKEN: TOKEN })
      const preview = (yield* client.intent("github.pulls_merge", { owner: "octo", repo: "demo", pull_number: 42 })) as Reply
      const auto = (yield* client.intent("github.pulls_merge", { owner: "octo", repo: "demo", pull_number: 42 }, { auto: true })) as Reply
      expect([preview.kind, auto.kind]).toEqual(["PROPOSALS", "PROPOSALS"])
      expect(up.seen).toEqual([])
      const lens = lensReplyHardened(preview as never)
      expect(lens).toContain("PUT /repos/octo/demo/pulls/42/merge")
      expect(lens).toContain("undo: never")
      expect(lens).not.toContain(TOKEN)
      const p = preview.proposals![0]
      expect(p.risk).toBe("high")
      const refused = (yield* client.commit(p)) as Reply
      expect(refused.kind === "ERROR" && refused.code).toBe("consent_required")
      expect(up.seen).toEqual([])
      const { consent } = yield* client.consentOf(refused as never)
      const token = yield* issueConsentGrant(consent, keyFromSeed(agentSeed)).pipe(Effect.provide(principal))
      const done = (yield* client.commit(p, { grants: [token] })) as Reply & { result?: unknown }
      expect(done.kind).toBe("RECEIPT")
      expect(up.seen.map((s) => `${s.method} ${s.url} ${s.headers.authorization}`)).toEqual([`PUT /repos/octo/demo/pulls/42/merge Bearer ${TOKEN}`])
      expect(lensReplyHardened(done as never)).not.toContain(TOKEN)
      // A comment (risk low) commits under the same grant without consent.
      const c = (yield* client.intent("github.issues_create_comment", { owner: "octo", repo: "demo", issue_number: 3, body: { body: "thanks" } })) as Reply
      expect(c.proposals![0].risk).toBe("low")
      expect(((yield* client.commit(c.proposals![0])) as Reply).kind).toBe("RECEIPT")
      expect(up.seen.filter((s) => s.method === "POST").map((s) => s.body)).toEqual([{ body: "thanks" }])
    }), { timeout: 60_000 })
})

describe("--preset petstore against a fake Petstore on loopback", () => {
  it.scoped("lists pets, reads a user without the password the projection drops, and deletes a pet (medium) only with consent", () =>
    Effect.gen(function* () {
      const { up, client, brief } = yield* setup(PRESETS.petstore, petstoreRoutes, {}, "/api/v3")
      expect(brief.kind === "BRIEF" && brief.capabilities.length).toBe(13)
      const pets = (yield* client.ask("petstore.findpetsbystatus", { status: "available" })) as Reply
      expect(pets.data).toEqual([{ id: 10, name: "Rex", status: "available", category: "Dogs", tags: ["friendly"] }])
      const user = (yield* client.ask("petstore.getuserbyname", { username: "ana" })) as Reply
      expect(user.data).toEqual({ username: "ana", firstName: "Ana", lastName: "Lima", email: "ana@example.test" })
      expect(lensReplyHardened(user as never)).not.toContain("hunter2")
      const del = (yield* client.intent("petstore.deletepet", { petId: 10 })) as Reply
      const p = del.proposals![0]
      expect(p.risk).toBe("medium")
      const refused = (yield* client.commit(p)) as Reply
      expect(refused.kind === "ERROR" && refused.code).toBe("consent_required")
      expect(up.seen.some((s) => s.method === "DELETE")).toBe(false)
      const { consent } = yield* client.consentOf(refused as never)
      const ok = yield* issueConsentGrant(consent, keyFromSeed(agentSeed)).pipe(Effect.provide(principal))
      expect(((yield* client.commit(p, { grants: [ok] })) as Reply).kind).toBe("RECEIPT")
      expect(up.seen.filter((s) => s.method === "DELETE").map((s) => s.url)).toEqual(["/api/v3/pet/10"])
      expect(up.seen.every((s) => s.headers.api_key === undefined)).toBe(true)
    }), { timeout: 60_000 })

  it.effect("PETSTORE_API_KEY, when set, is the api_key header", () =>
    Effect.gen(function* () {
      const creds = yield* presetCredentials(PRESETS.petstore).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PETSTORE_API_KEY", "special-key"]]))))
      expect(creds).toEqual({ headers: { api_key: "special-key" }, used: ["PETSTORE_API_KEY"] })
    }))
})

describe("mandate yea openapi --preset refusals", () => {
  it.effect("an unknown preset is mandate/unknown_preset with the list of presets", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(resolvePreset("gitlab"))
      expect([e.reason, e.path]).toEqual(["mandate/unknown_preset", "--preset"])
    }))

  it("on the command line: an unknown preset, and neither a document nor a preset, are refused by name before anything is served", async () => {
    const unknown = await runCli(["yea", "openapi", "--preset", "gitlab", "--port", "0"], { env: { NO_COLOR: "1", PATH: process.env.PATH } })
    expect(unknown.status).toBe(1)
    expect(unknown.stderr.trim()).toBe('error: mandate/unknown_preset at --preset: no preset named "gitlab"; the presets are: github, petstore')
    const none = await runCli(["yea", "openapi", "--port", "0"], { env: { NO_COLOR: "1", PATH: process.env.PATH } })
    expect(none.status).toBe(1)
    expect(none.stderr).toMatch(/^error: mandate\/usage at mandate yea openapi: name the OpenAPI document \(SPEC\) or a preset \(--preset github\|petstore\)/m)
  })
})
