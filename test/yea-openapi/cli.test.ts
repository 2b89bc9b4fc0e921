// `mandate yea openapi SPEC.json --base URL` as a person runs it: the example notes API served on
// yea:// (loopback), reached by an agent over TCP: BRIEF lists the operations, a write is a
// proposal that sends nothing upstream, and COMMIT sends it once.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect } from "../../src/bind/yea-connect/index.js"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import { makeClient } from "../../src/yea/client.js"
import { issueRootGrant } from "../../src/yea/grant.js"
import { keyFromSeed } from "../../src/yea/keys.js"
import { repoRoot } from "../support/shared.js"
import { startNotes } from "./rest-server.js"
import { cliEntry } from "../support/cli.js"

const principalSeed = new Uint8Array(32).fill(1)
const agentSeed = new Uint8Array(32).fill(2)

/** The upstream credential, in a header file (mode 0600) rather than on the command line. */
const headerFile = (): string => {
  const path = join(mkdtempSync(join(tmpdir(), "yea-openapi-headers-")), "headers")
  writeFileSync(path, "# the notes API's token\nAuthorization: Bearer secret-token\n", { mode: 0o600 })
  return path
}

const serve = (base: string) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ url: string; kill: () => void }>((resolve, reject) => {
          const args = [...cliEntry, "yea", "openapi", join(import.meta.dirname, "fixtures", "notes.json"), "--base", base, "--port", "0", "--id", "notes.example", "--trust", keyFromSeed(principalSeed), "--header-file", headerFile(), "--header", "x-client: mandate"]
          const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] })
          let err = ""
          const timer = setTimeout(() => reject(new Error(`did not start: ${err}`)), 60_000)
          child.stderr.on("data", (c: Buffer) => {
            err += c.toString()
            const m = /serving notes\.example \(4 capabilities\) at (\S+)/.exec(err)
            if (m) {
              clearTimeout(timer)
              resolve({ url: m[1], kill: () => child.kill() })
            }
          })
        })
    ),
    (s) => Effect.sync(() => s.kill())
  )

describe("mandate yea openapi", () => {
  it.live("serves the example API: BRIEF, a proposal that sends nothing, COMMIT sends it once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const rest = yield* Effect.acquireRelease(Effect.promise(startNotes), (s) => Effect.promise(s.close))
        const { url } = yield* serve(rest.base)
        const grant = yield* issueRootGrant({ sub: keyFromSeed(agentSeed), caveats: [{ can: ["notes.*"] }, { risk: "low" }] }).pipe(
          Effect.provide(Layer.merge(Signer.fromSeed(principalSeed), RandomBytes.live))
        )
        const client = yield* makeClient(yield* connect(url), { grants: [grant] }).pipe(Effect.provide(Layer.merge(Signer.fromSeed(agentSeed), RandomBytes.live)))
        const brief = yield* client.hello()
        expect(brief.kind === "BRIEF" && brief.capabilities.map((c) => `${c.kind} ${c.name}`)).toEqual(["ask notes.list_notes", "intent notes.create_note", "ask notes.get_note", "intent notes.delete_note"])
        const p = yield* client.intent("notes.create_note", { body: { text: "from the CLI" } })
        expect(rest.requests.filter((r) => r.startsWith("POST")).length).toBe(0)
        const proposal = (p as { proposals: ReadonlyArray<{ id: string; hash: string }> }).proposals[0]
        expect((yield* client.commit(proposal)).kind).toBe("RECEIPT")
        expect(rest.requests.filter((r) => r.startsWith("POST")).length).toBe(1)
        // Every upstream call carried the credential of the header file.
        expect(rest.authorizations.length).toBeGreaterThan(0)
        expect(new Set(rest.authorizations)).toEqual(new Set(["Bearer secret-token"]))
      })
    ), { timeout: 120_000 })
})
