// `mandate writ approver`, `mandate writ approve` and `mandate writ jws wrap|unwrap`, run as a
// user runs them, in a temporary folder: the approval flow of docs/approval.md end to end.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { mandate, noStack } from "../cli-writ/run.js"

const did = (out: string) => out.match(/did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+/)![0]

describe("mandate writ approver / approve / jws (CLI)", () => {
  it("names the approver, builds the approval and the re-issued chain, and the call is signed under it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mandate-approve-"))
    const f = (n: string) => join(dir, n)
    const [p, m, g, e] = await Promise.all(["p", "m", "g", "e"].map((k) => mandate("keygen", f(`${k}.key`))))
    const [P, M, G, E] = [p, m, g, e].map((r) => did(r.stdout))
    expect(P).toBeDefined()
    await mandate("writ", "issue", "--key", f("p.key"), "--hld", M, "--act", "pay", "--max", "amount=10000", "--set", "pay_to=v1,v2", "--ttl", "3600", "--out", f("w1.json"))
    await mandate("writ", "delegate", "--key", f("m.key"), "--chain", f("w1.json"), "--hld", G, "--max", "amount=100", "--out", f("w2.json"))
    const d3 = await mandate("writ", "delegate", "--key", f("g.key"), "--chain", f("w2.json"), "--hld", E, "--out", f("w3.json"))
    expect(d3.status).toBe(0)
    const draft = { op: "pay", args: { amount: 500, pay_to: "v1", memo: "invoice 7" } }
    writeFileSync(f("draft.json"), JSON.stringify(draft))
    // The call cannot even be signed as it stands: out_of_bounds, one line.
    const refused = await mandate("writ", "call", "--key", f("g.key"), "--chain", f("w3.json"), "--op", "pay", "--args", JSON.stringify(draft.args), "--out", f("call.json"))
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^error: out_of_bounds at args\.amount/m)
    const who = await mandate("writ", "approver", "--call", f("draft.json"), "--chain", f("w3.json"))
    expect(who.status).toBe(0)
    expect(who.stdout.split("\n")[0]).toBe(M)
    // G is not the approver.
    const wrong = await mandate("writ", "approve", "--key", f("g.key"), "--call", f("draft.json"), "--chain", f("w3.json"), "--out", f("a.json"))
    expect(wrong.status).toBe(1)
    expect(wrong.stderr).toMatch(/^error: approval\/not_approver at replaced\.iss/m)
    expect(noStack(wrong)).toBe(true)
    const a = await mandate("writ", "approve", "--key", f("m.key"), "--call", f("draft.json"), "--chain", f("w3.json"), "--out", f("a.json"))
    expect(a.status).toBe(0)
    expect(a.stdout).toContain(`next: ${G} re-issues writ 2`)
    const b = await mandate("writ", "approve", "--key", f("g.key"), "--call", f("draft.json"), "--chain", f("w3.json"), "--above", f("a.json"), "--out", f("b.json"))
    expect(b.status).toBe(0)
    expect(b.stdout).toContain("complete")
    const chain = JSON.parse(readFileSync(f("b.json"), "utf8")) as Array<{ iss: string; hld: string; bnd: Record<string, unknown> }>
    expect(chain.map((w) => [w.iss, w.hld])).toEqual([[P, M], [M, G], [G, E]])
    expect(chain[1].bnd.amount).toEqual({ t: "max", v: 500 })
    const call = await mandate("writ", "call", "--key", f("g.key"), "--chain", f("b.json"), "--op", "pay", "--args", JSON.stringify(draft.args), "--out", f("call.json"))
    expect(call.status).toBe(0)
    // Nothing left to approve for the call under the new chain.
    const none = await mandate("writ", "approver", "--call", f("call.json"))
    expect(none.status).toBe(1)
    expect(none.stderr).toMatch(/^error: approval\/admitted/m)

    // The JWS profile on the same files: the call, wrapped by G, unwrapped to the same object.
    const wrapped = await mandate("writ", "jws", "wrap", f("call.json"), "--key", f("g.key"), "--out", f("call.jws"))
    expect(wrapped.status).toBe(0)
    const un = await mandate("writ", "jws", "unwrap", f("call.jws"), "--out", f("call2.json"))
    expect(un.status).toBe(0)
    expect(JSON.parse(readFileSync(f("call2.json"), "utf8"))).toEqual(JSON.parse(readFileSync(f("call.json"), "utf8")))
    const notSigner = await mandate("writ", "jws", "wrap", f("call.json"), "--key", f("m.key"))
    expect(notSigner.stderr).toMatch(/^error: jws\/kid_mismatch at kid/m)
    const [h, pl] = readFileSync(f("call.jws"), "utf8").trim().split(".")
    writeFileSync(f("bad.jws"), `${h}.${pl}.${"A".repeat(86)}`)
    const bad = await mandate("writ", "jws", "unwrap", f("bad.jws"))
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/^error: jws\/bad_signature at signature/m)
  }, 600_000)
})
