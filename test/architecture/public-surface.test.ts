// The public surface, per subpath of package.json `exports`: each index exports a chosen list,
// and this test holds the names it exports at run time (a namespace's members as `Ns.name`) to the
// sorted lists in public-surface.json. A name added or removed fails here until the fixture is
// edited with it, so the surface changes only on purpose. (Type-only exports have no run-time
// name; the typecheck of test/package and the docs' examples covers those.)
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/shared.js"

const fixture: Record<string, ReadonlyArray<string>> = JSON.parse(
  readFileSync(join(repoRoot, "test", "architecture", "public-surface.json"), "utf8")
)

const isModule = (v: unknown): v is Record<string, unknown> =>
  Object.prototype.toString.call(v) === "[object Module]"

/** The run-time names of `mod`, sorted; a nested namespace's members as `Ns.name`, at any depth. */
const namesOf = (mod: Record<string, unknown>, nested: boolean, prefix = ""): Array<string> =>
  Object.keys(mod).flatMap((k) => {
    const v = mod[k]
    return nested && isModule(v) ? [prefix + k, ...namesOf(v, true, `${prefix}${k}.`)] : [prefix + k]
  }).sort()

const subpaths: Record<string, () => Promise<Record<string, unknown>>> = {
  "mandate": () => import("../../src/index.js"),
  "mandate/kernel": () => import("../../src/kernel/index.js"),
  "mandate/accounting": () => import("../../src/accounting/index.js"),
  "mandate/writ": () => import("../../src/writ/index.js"),
  "mandate/writ/executor": () => import("../../src/writ/executor/index.js"),
  "mandate/yea": () => import("../../src/yea/index.js"),
  "mandate/store": () => import("../../src/store/index.js"),
  "mandate/bind": () => import("../../src/bind/index.js"),
  "mandate/ledger": () => import("../../src/ledger/index.js"),
  "mandate/gateway": () => import("../../src/gateway/index.js"),
  "mandate/app": () => import("../../src/app/index.js"),
  "mandate/console": () => import("../../src/console/index.js"),
  "mandate/examples": () => import("../../src/examples/index.js")
}

describe("public surface (package.json exports)", () => {
  it("covers every subpath package.json exports", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, unknown> }
    const exported = Object.keys(pkg.exports).filter((k) => k !== "./package.json").map((k) => (k === "." ? "mandate" : `mandate/${k.slice(2)}`))
    expect(Object.keys(subpaths).sort()).toEqual(exported.sort())
    expect(Object.keys(fixture).sort()).toEqual(exported.sort())
  })

  for (const [subpath, load] of Object.entries(subpaths)) {
    it(`${subpath} exports exactly the names in public-surface.json`, async () => {
      // The root holds one namespace per subpath; the subpaths' own lists are checked below.
      const names = namesOf(await load(), subpath !== "mandate")
      expect(names).toEqual(fixture[subpath])
    }, 60_000)
  }
})
