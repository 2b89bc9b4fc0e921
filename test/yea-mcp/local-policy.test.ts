// The local files the MCP side reads beside its options: `policy.json` in the YEA home (the
// policy guide, "Two files called policy"; SPEC-bridge step 1 "Deny") and the pinned principal
// key in the file `YEA_PRINCIPAL_PUB` names (security.md: refused when the server's user could
// change it, or when it runs as root). In process: temp folders, never the real home.
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, chownSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { readPinnedKey } from "../../src/bind/mcp/pinned-key.js"
import { effectiveTightening, readPolicyFile } from "../../src/bind/mcp/policy-file.js"
import { shopService } from "../../src/examples/shop.js"
import { bridgeOver, grantOf, principalKey, text } from "./inproc-bridge.js"

const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "yea-local-"))
  chmodSync(dir, 0o755)
  return dir
}
const readFile = (path: string) => readPolicyFile(path).pipe(Effect.provide(NodeFileSystem.layer))
const order = { items: [{ sku: "m01", qty: 1 }], deliver: "2030-01-02" }

describe("policy.json", () => {
  it.effect("no file adds nothing; a deny joins the options'; a file that is not JSON, not an object or has a bad deny refuses", () =>
    Effect.gen(function* () {
      const dir = temp()
      expect(yield* readFile(join(dir, "policy.json"))).toBeUndefined()
      const own = { deny: ["a"], outOfBand: "high" as const }
      expect(effectiveTightening(own, undefined)).toEqual({ ok: true, value: own })
      writeFileSync(join(dir, "policy.json"), JSON.stringify({ deny: ["shop.order"], outOfBand: "medium" }))
      expect(effectiveTightening(own, yield* readFile(join(dir, "policy.json")))).toEqual({ ok: true, value: { deny: ["a", "shop.order"], outOfBand: "medium" } })
      for (const body of ["{ not json", "[1]", JSON.stringify({ deny: "shop.order" })]) {
        writeFileSync(join(dir, "policy.json"), body)
        const t = effectiveTightening(own, yield* readFile(join(dir, "policy.json")))
        expect(t.ok).toBe(false)
      }
      mkdirSync(join(dir, "adir"))
      expect(effectiveTightening(own, yield* readFile(join(dir, "adir"))).ok).toBe(false)
    }))

  it.scoped("the bridge: a deny in the file refuses the tool (previews too) though the options allow it, re-read on every call", () =>
    Effect.gen(function* () {
      const dir = temp()
      const path = join(dir, "policy.json")
      const grant = yield* grantOf([{ svc: ["shop.example"] }])
      const b = yield* bridgeOver([shopService([principalKey])], [grant], { policyFile: readFile(path) })
      const before = yield* b.call("shop_order", { ...order, preview: true })
      expect(before.isError ?? false).toBe(false)
      writeFileSync(path, JSON.stringify({ deny: ["shop.order"] }))
      const denied = yield* b.call("shop_order", { ...order, preview: true })
      expect(denied.isError).toBe(true)
      expect(text(denied)).toBe("✗ denied: your policy never allows shop.order")
      expect(text(yield* b.call("shop_order", order))).toBe("✗ denied: your policy never allows shop.order")
      writeFileSync(path, JSON.stringify({ deny: ["shop.example/shop.search"] }))
      expect(text(yield* b.call("shop_search", {}))).toBe("✗ denied: your policy never allows shop.search")
      writeFileSync(path, "{ nope")
      expect(text(yield* b.call("shop_order", order))).toMatch(/^✗ refused: the policy file can't be used: the policy file is not a JSON object/)
    }))
})

describe("the pinned principal key (YEA_PRINCIPAL_PUB)", () => {
  const someoneElse = { uid: process.getuid!() + 4242, gids: [] as Array<number> }
  const pin = (dir: string, body = principalKey + "\n", mode = 0o644) => {
    const path = join(dir, "principal.pub")
    writeFileSync(path, body)
    chmodSync(path, mode)
    return path
  }
  const reason = (path: string, who: { uid: number; gids: ReadonlyArray<number> }) =>
    Effect.map(Effect.flip(readPinnedKey(path, who)), (e) => e.reason).pipe(Effect.provide(NodeFileSystem.layer))

  it.effect("a file out of the server's user's reach is read", () =>
    Effect.gen(function* () {
      expect(yield* readPinnedKey(pin(temp()), someoneElse)).toBe(principalKey)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("refused: as root, owned by the server's user, writable by its group or by all, under a folder it could change, through a link, not a key", () =>
    Effect.gen(function* () {
      expect(yield* reason(pin(temp()), { uid: 0, gids: [] })).toBe("pinned_key_root")
      // The file's owner is the server's user (as root, the test hands the file to another uid first).
      const mine = pin(temp())
      if (process.getuid!() === 0) chownSync(mine, 4243, 4243)
      expect(yield* reason(mine, { uid: process.getuid!() === 0 ? 4243 : process.getuid!(), gids: [] })).toBe("pinned_key_owned")
      expect(yield* reason(pin(temp(), principalKey, 0o646), someoneElse)).toBe("pinned_key_writable")
      const groupDir = temp()
      expect(yield* reason(pin(groupDir, principalKey, 0o664), { ...someoneElse, gids: [process.getgid!()] })).toBe("pinned_key_writable")
      const open = temp()
      const path = pin(open)
      chmodSync(open, 0o777)
      expect(yield* reason(path, someoneElse)).toBe("pinned_key_writable")
      const linked = temp()
      symlinkSync(pin(temp()), join(linked, "link.pub"))
      expect(yield* reason(join(linked, "link.pub"), someoneElse)).toBe("pinned_key_symlink")
      expect(yield* reason(pin(temp(), "not a key"), someoneElse)).toBe("pinned_key_invalid")
      expect(yield* reason(join(temp(), "missing.pub"), someoneElse)).toBe("pinned_key_unreadable")
      expect(yield* reason(temp(), someoneElse)).toBe("pinned_key_unreadable")
    }))
})
