// `mandate yea add | services | remove` (docs/cli.md "add, remove, services"): add checks the
// service with HELLO and saves what its BRIEF claims; services lists; remove takes a URL or an id;
// an unreachable URL and a malformed services.json are refused by name. In process, with the
// example shop served on yea:// (loopback, port 0) and a temp home.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { exampleRuntime } from "../../src/examples/runtime.js"
import { serveOn, stateLayer } from "../../src/app/yea-serve.js"
import { runCli } from "../support/cli.js"

const shop = Effect.flatMap(exampleRuntime("shop", []), (rt) => serveOn(rt, { _tag: "tcp", port: 0 })).pipe(Effect.provide(stateLayer()), Effect.orDie)

describe("mandate yea add, services, remove", () => {
  it.scoped("add saves the BRIEF's id and name; services lists it; remove by id empties the list", () =>
    Effect.gen(function* () {
      const url = yield* shop
      const home = join(mkdtempSync(join(tmpdir(), "yea-services-")), "home")
      const env = { NO_COLOR: "1", HOME: home, MANDATE_HOME: home }
      const cli = (args: ReadonlyArray<string>) => Effect.promise(() => runCli(args, { env }))
      expect((yield* cli(["yea", "services"])).stdout).toContain("no services")
      const added = yield* cli(["yea", "add", url])
      expect(added.status).toBe(0)
      expect(added.stdout).toContain(`added shop.example (Example Meals) at ${url}`)
      expect(JSON.parse(readFileSync(join(home, "services.json"), "utf8"))).toEqual([{ url, id: "shop.example", name: "Example Meals" }])
      expect((yield* cli(["yea", "add", url])).status).toBe(0)
      expect((yield* cli(["yea", "services"])).stdout).toBe(`shop.example  Example Meals  ${url}\n`)
      // `yea do` takes a saved service's id (or name) where it takes a URL; an unknown one is refused.
      const hello = yield* cli(["yea", "do", "shop.example", "HELLO"])
      expect(hello.status, hello.stderr).toBe(0)
      expect(hello.stdout).toContain("shop.example")
      expect((yield* cli(["yea", "do", "nope.example", "HELLO"])).stderr).toMatch(/^error: mandate\/unknown_service at nope.example/m)
      const missing = yield* cli(["yea", "remove", "nope.example"])
      expect(missing.stderr).toMatch(/^error: mandate\/unknown_service at nope.example/m)
      expect((yield* cli(["yea", "remove", "shop.example"])).stdout).toContain("removed 1 service")
      expect(JSON.parse(readFileSync(join(home, "services.json"), "utf8"))).toEqual([])
    }), { timeout: 60_000 })

  it.effect("mcp with no URL and no saved service says how to add one; an unreachable URL adds nothing; a malformed services.json is refused by name", () =>
    Effect.gen(function* () {
      const home = join(mkdtempSync(join(tmpdir(), "yea-services-")), "home")
      const env = { NO_COLOR: "1", HOME: home, MANDATE_HOME: home }
      const none = yield* Effect.promise(() => runCli(["yea", "mcp", "--agent-seed", "A".repeat(43)], { env }))
      expect(none.stderr).toMatch(/^error: mandate\/usage at mandate yea mcp: name at least one service URL, or add one with `mandate yea add URL`/m)
      const down = yield* Effect.promise(() => runCli(["yea", "add", "yea://127.0.0.1:1"], { env }))
      expect(down.status).toBe(1)
      expect(down.stderr).toMatch(/^error: yea\/\S+ at yea:\/\/127.0.0.1:1/m)
      mkdirSync(home, { recursive: true, mode: 0o700 })
      writeFileSync(join(home, "services.json"), "{}")
      const bad = yield* Effect.promise(() => runCli(["yea", "services"], { env }))
      expect(bad.stderr).toMatch(/^error: mandate\/bad_services_file/m)
    }), { timeout: 60_000 })
})
