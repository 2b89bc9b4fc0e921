// `mandate yea service-id URL`: the id from a running service's BRIEF (SPEC §4.1), the example
// calendar served on loopback (yea:// and the HTTP bridge, port 0) in this process, and a service
// that is not there.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exampleRuntime } from "../../src/examples/runtime.js"
import { serveOn, stateLayer } from "../../src/app/yea-serve.js"
import { principalKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate } from "./run.js"

const h = homes()

describe("mandate yea service-id URL", () => {
  it.scoped("prints the id of the BRIEF a service answers HELLO with, on yea:// and http://", () =>
    Effect.gen(function* () {
      const runtime = yield* exampleRuntime("calendar", [principalKey])
      for (const transport of [{ _tag: "tcp", port: 0, host: "127.0.0.1" }, { _tag: "http", port: 0, host: "127.0.0.1" }] as const) {
        const url = yield* serveOn(runtime, transport)
        const r = yield* Effect.promise(() => mandate(["yea", "service-id", url], h.env))
        expect(r.status, r.stderr).toBe(0)
        expect(r.stdout).toBe(`${runtime.id}\n`)
      }
    }).pipe(Effect.provide(stateLayer()))
  )

  it("refuses a service that is not there (unavailable), naming the URL", async () => {
    const r = await mandate(["yea", "service-id", "yea://127.0.0.1:1", "--timeout", "5"], h.env)
    expect(r.status).toBe(1)
    expect(errorLine(r)).toMatch(/^error: unavailable at yea:\/\/127\.0\.0\.1:1: /)
  })
})
