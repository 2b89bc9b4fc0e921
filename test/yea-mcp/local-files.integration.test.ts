// `mandate yea mcp-example` (a child process, driven by the SDK's Client over stdio) reads what
// the reference tools read beside their options (docs/cli.md "Environment"; SPEC-mcp-ts `yea()`
// options `policy`, `principal`, `tighten`): `policy.json` in the home `YEA_HOME` names, the
// signed policy in `YEA_POLICY`, and the pinned key file `YEA_PRINCIPAL_PUB` names. Every home is
// a temp folder.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { policy, principalKey, start, text } from "./harness.js"

const T = { timeout: 180_000 }
const home = () => {
  const dir = mkdtempSync(join(tmpdir(), "yea-home-"))
  chmodSync(dir, 0o700)
  return dir
}

describe("mcp-example reads the YEA home and variables", () => {
  it.live("a deny in $YEA_HOME/policy.json refuses a tool the signed policy lets run, with no --deny", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = home()
        writeFileSync(join(h, "policy.json"), JSON.stringify({ deny: ["reschedule"] }))
        const s = yield* start({ transport: "stdio", env: { YEA_HOME: h, MANDATE_HOME: "" } })
        const r = yield* Effect.promise(() => s.call("reschedule", { event: "e42", to: "Thu 15:00" }))
        expect(r.isError).toBe(true)
        expect(text(r)).toBe("✗ denied: your policy never allows reschedule")
        expect((yield* Effect.promise(() => s.book())).applied).toEqual([])
      })
    ), T)

  it.live("YEA_POLICY is the signed policy when --policy is not given: the call runs on its own", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = home()
        const file = join(h, "policy.pg1")
        writeFileSync(file, policy + "\n")
        const s = yield* start({ transport: "stdio", policy: null, env: { YEA_HOME: h, MANDATE_HOME: "", YEA_POLICY: file } })
        const r = yield* Effect.promise(() => s.call("reschedule", { event: "e42", to: "Thu 15:00" }))
        expect(text(r)).toMatch(/^✓ Move e42 to Thu 15:00 \(receipt r_/)
      })
    ), T)

  it.live("a YEA_PRINCIPAL_PUB file the server's user could rewrite is refused, said on stderr, and nothing runs on its own", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = home()
        const pub = join(h, "principal.pub")
        writeFileSync(pub, principalKey + "\n")
        const s = yield* start({ transport: "stdio", principal: null, env: { YEA_HOME: h, MANDATE_HOME: "", YEA_PRINCIPAL_PUB: pub } })
        const r = yield* Effect.promise(() => s.call("reschedule", { event: "e42", to: "Thu 15:00" }))
        expect(text(r)).not.toMatch(/^✓/)
        expect((yield* Effect.promise(() => s.book())).applied).toEqual([])
        expect(s.stderr()).toMatch(/yea: pinned_key_(root|owned): .*nothing runs on its own and no consent is accepted/)
      })
    ), T)
})
