// `mandate yea examples --port 0`: the example calendar and shop on two free loopback ports over
// yea://, run in this process in a fiber (it serves until interrupted): its two `serving` lines,
// a HELLO to each through `mandate yea do`, and nothing listening once the fiber is interrupted.
import { describe, expect, it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Effect, Fiber } from "effect"
import { afterAll } from "vitest"
import { rmSync } from "node:fs"
import { PassThrough, Readable } from "node:stream"
import { runArgs } from "../../src/cli/run.js"
import { CliIo, consoleOf, type Io } from "../../src/cli/io.js"
import { AGENT } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const h = homes()
writeSeed(h.home, "agent.key", AGENT)
afterAll(() => rmSync(h.root, { recursive: true, force: true }))

const SERVING = /^serving (\S+) at (yea:\/\/\S+)$/gm

describe("mandate yea examples", () => {
  it.live("serves the calendar and the shop on two free ports until interrupted", () =>
    Effect.gen(function* () {
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      let out = ""
      let err = ""
      stderr.on("data", (d: Buffer) => void (err += d.toString()))
      let failed = false
      const io: Io = { stdout, stderr, stdin: Readable.from([]), env: h.env, fail: () => void (failed = true) }
      const env = new Map(Object.entries(h.env).filter((e): e is [string, string] => e[1] !== undefined))
      // Both lines are printed once both services listen.
      const lines = Effect.async<ReadonlyArray<RegExpMatchArray>>((resume) => {
        stdout.on("data", (d: Buffer) => {
          out += d.toString()
          const found = [...out.matchAll(SERVING)]
          if (found.length === 2) resume(Effect.succeed(found))
        })
      })
      const fiber = yield* runArgs(["yea", "examples", "--port", "0"]).pipe(
        Effect.withConsole(consoleOf(io)),
        Effect.withConfigProvider(ConfigProvider.fromMap(env)),
        Effect.provideService(CliIo, io),
        Effect.provide(NodeContext.layer),
        Effect.fork
      )
      const found = yield* Effect.raceFirst(lines, Effect.flatMap(Fiber.join(fiber), () => Effect.dieMessage(`yea examples ended: ${err}`)))
      expect(found.map((m) => m[1])).toEqual(["calendar.example", "shop.example"])
      const [calendar, shop] = found.map((m) => m[2]!)
      expect(calendar).not.toBe(shop)
      for (const [url, title] of [[calendar, "# Example Calendar (calendar.example)"], [shop, "# Example Meals (shop.example)"]] as const) {
        const hello = yield* Effect.promise(() => mandate(["yea", "do", url!, "HELLO"], h.env))
        expect(hello.status, hello.stderr).toBe(0)
        expect(hello.stdout).toContain(title)
      }
      yield* Fiber.interrupt(fiber)
      expect(failed).toBe(false)
      // Interrupted, the scope closes and both ports are released.
      for (const url of [calendar, shop]) {
        const gone = yield* Effect.promise(() => mandate(["yea", "service-id", url!, "--timeout", "5"], h.env))
        expect(errorLine(gone)).toMatch(/^error: unavailable at /)
      }
    }), 120_000)

  it("refuses a port whose port + 2 is out of range (mandate/usage)", async () => {
    const r = await mandate(["yea", "examples", "--port", "65534"], h.env)
    expect(r.status).toBe(1)
    expect(errorLine(r)).toMatch(/^error: mandate\/usage at --port: /)
  })
})
