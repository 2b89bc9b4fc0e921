// The OpenAPI adapter serving the example notes API (fixtures/notes.json) from the local REST
// server: GETs answer as `ask`; writes are proposals that show the request and send nothing until
// COMMIT; they are never auto-committed; a write over the grant's risk ceiling needs the person's
// consent, which then commits it; upstream errors are YEA errors.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { stateLayer } from "../../src/app/yea-serve.js"
import { upstreamLayer } from "../../src/bind/yea-openapi/index.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import { issueConsentGrant } from "../../src/yea/consent.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { lensReplyHardened } from "../../src/yea/lens/reply.js"
import { fromOpenAPI, operations } from "../../src/yea/openapi/index.js"
import { makeService } from "../../src/yea/service/runtime.js"
import { startNotes } from "./rest-server.js"

const doc = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "notes.json"), "utf8")) as unknown
const principalSeed = new Uint8Array(32).fill(1)
const agentSeed = new Uint8Array(32).fill(2)
const principal = Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.seeded(new Uint8Array([3])))

const setup = Effect.acquireRelease(Effect.promise(startNotes), (s) => Effect.promise(s.close)).pipe(
  Effect.flatMap((rest) =>
    Effect.gen(function* () {
      const spec = fromOpenAPI(doc, { base: rest.base, id: "notes.example", trust: [keyFromSeed(principalSeed)] })
      const service = yield* makeService(spec).pipe(Effect.provide(upstreamLayer({ headers: { authorization: "Bearer never-shown" } })))
      const grant = yield* issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ svc: ["notes.example"] }, { can: ["notes.*"] }, { risk: "low" }] }).pipe(Effect.provide(principal))
      const client = yield* makeClient(connectInProcess(service), { grants: [grant] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(agentSeed), RandomBytes.live)))
      yield* client.hello()
      return { rest, client, spec }
    })
  ),
  Effect.provide(stateLayer())
)

describe("the OpenAPI adapter on the example notes API", () => {
  it("maps GET to ask and writes to intent, named prefix.operationId, with compact params", () => {
    const ops = operations(doc, "notes")
    expect(ops.map((o) => `${o.method} ${o.name}`)).toEqual(["get notes.list_notes", "post notes.create_note", "get notes.get_note", "delete notes.delete_note"])
    expect(ops[1].params).toEqual({ body: { text: "string", "tag?": "string" } })
    expect(ops[3].params).toEqual({ id: "int" })
  })

  it.scoped("ask answers from upstream; a write proposal shows the request and sends nothing; it is never auto-committed; COMMIT sends it once", () =>
    Effect.gen(function* () {
      const { rest, client } = yield* setup
      const list = yield* client.ask("notes.list_notes", { tag: "home" })
      expect(list.kind).toBe("ANSWER")
      expect((list as { data: unknown }).data).toEqual([{ id: 1, text: "buy milk", tag: "home" }])
      const before = rest.requests.length
      const preview = yield* client.intent("notes.create_note", { body: { text: "call Ana" } })
      const auto = yield* client.intent("notes.create_note", { body: { text: "call Ana" } }, { auto: true })
      expect(rest.requests.length).toBe(before) // nothing sent upstream by a proposal
      expect(preview.kind).toBe("PROPOSALS")
      expect(auto.kind).toBe("PROPOSALS") // irreversible: never auto-committed
      const lens = lensReplyHardened(preview)
      expect(lens).toContain("POST /api/notes")
      expect(lens).toContain('+ create 127.0.0.1')
      expect(lens).toContain('body {"text":"call Ana"}')
      expect(lens).toContain("undo: never")
      expect(lens).not.toContain("never-shown")
      const p = (preview as { proposals: ReadonlyArray<{ id: string; hash: string }> }).proposals[0]
      const receipt = yield* client.commit(p)
      expect(receipt.kind).toBe("RECEIPT")
      expect(rest.requests.filter((r) => r === "POST /api/notes").length).toBe(1)
      expect([...rest.notes.values()].map((n) => n.text)).toContain("call Ana")
    }), { timeout: 60_000 })

  it.scoped("a delete (risk medium) over the grant's ceiling needs consent; with it the delete runs; an upstream 404 is not_found", () =>
    Effect.gen(function* () {
      const { rest, client } = yield* setup
      const proposals = yield* client.intent("notes.delete_note", { id: 1 })
      const p = (proposals as { proposals: ReadonlyArray<{ id: string; hash: string; risk: string }> }).proposals[0]
      expect(p.risk).toBe("medium")
      const refused = yield* client.commit(p)
      expect(refused.kind === "ERROR" && refused.code).toBe("consent_required")
      expect(rest.notes.has(1)).toBe(true)
      const { consent } = yield* client.consentOf(refused)
      const token = yield* issueConsentGrant(consent, keyFromSeed(agentSeed)).pipe(Effect.provide(principal))
      const done = yield* client.commit(p, { grants: [token] })
      expect(done.kind).toBe("RECEIPT")
      expect(rest.notes.has(1)).toBe(false)
      const missing = yield* client.ask("notes.get_note", { id: 99 })
      expect(missing.kind === "ERROR" && missing.code).toBe("not_found")
      const noId = yield* client.ask("notes.get_note", {})
      expect(noId.kind).toBe("ERROR")
    }), { timeout: 60_000 })
})
