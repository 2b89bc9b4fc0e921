// `mandate yea services | add NAME URL | remove NAME`, and `yea do NAME`: the example calendar
// served on loopback (yea://, port 0) in this process, a temp MANDATE_HOME per test. What the
// services file holds after each command, and every refusal with its reason.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { exampleRuntime, serveOn, stateLayer } from "../../src/app/yea-serve.js"
import { AGENT, principalKey } from "../yea/_helpers.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => Effect.promise(() => mandate(args, env))
const calendarOn = Effect.gen(function* () {
  const runtime = yield* exampleRuntime("calendar", [principalKey])
  return { id: runtime.id, url: yield* serveOn(runtime, { _tag: "tcp", port: 0, host: "127.0.0.1" }) }
})

describe("mandate yea add, services, remove", () => {
  it.scoped("adds a service after HELLO (its BRIEF's id kept), lists it, reaches it by name with do, replaces and removes it", () =>
    Effect.gen(function* () {
      const h = homes()
      writeSeed(h.home, "agent.key", AGENT)
      const cal = yield* calendarOn
      const none = yield* run(["yea", "services"], h.env)
      expect(none.status).toBe(0)
      expect(none.stdout).toBe("")
      expect(none.stderr).toContain("no services saved")
      const added = yield* run(["yea", "add", "cal", cal.url], h.env)
      expect(added.status, added.stderr).toBe(0)
      expect(added.stdout).toBe(`added cal  ${cal.url}  ${cal.id}\n`)
      const file = join(h.home, "services.json")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ services: [{ name: "cal", url: cal.url, id: cal.id }] })
      expect((yield* run(["yea", "add", "later", "https://127.0.0.1:1", "--no-check"], h.env)).status).toBe(0)
      const listed = yield* run(["yea", "services"], h.env)
      expect(listed.stdout).toBe(`cal    ${cal.url}  ${cal.id}\nlater  https://127.0.0.1:1  unknown\n`)
      const hello = yield* run(["yea", "do", "cal", "HELLO"], h.env)
      expect(hello.status, hello.stderr).toBe(0)
      expect(hello.stdout).toContain(cal.id)
      const replaced = yield* run(["yea", "add", "later", cal.url], h.env)
      expect(replaced.stdout).toBe(`replaced later  ${cal.url}  ${cal.id}\n`)
      expect((yield* run(["yea", "remove", "cal"], h.env)).stdout).toBe("removed cal\n")
      expect((yield* run(["yea", "services"], h.env)).stdout).toBe(`later  ${cal.url}  ${cal.id}\n`)
    }).pipe(Effect.provide(stateLayer()))
  )

  it("refuses a bad name, a URL it cannot save, a service that does not answer, and an unknown name; nothing is saved", async () => {
    const h = homes()
    const file = join(h.home, "services.json")
    expect(errorLine(await mandate(["yea", "add", "Bad Name", "yea://127.0.0.1:1"], h.env))).toMatch(/^error: invalid_params at NAME: /)
    expect(errorLine(await mandate(["yea", "add", "x", "stdio:"], h.env))).toMatch(/^error: mandate\/bad_url at stdio:: /)
    expect(errorLine(await mandate(["yea", "add", "x", "not a url"], h.env))).toMatch(/^error: mandate\/bad_url at not a url: /)
    expect(errorLine(await mandate(["yea", "add", "x", "yea://127.0.0.1:1", "--timeout", "5"], h.env))).toMatch(/^error: unavailable at yea:\/\/127\.0\.0\.1:1: /)
    expect(existsSync(file)).toBe(false)
    expect(errorLine(await mandate(["yea", "remove", "x"], h.env))).toMatch(/^error: mandate\/no_service at x: /)
    expect(errorLine(await mandate(["yea", "do", "x", "HELLO"], h.env))).toMatch(/^error: mandate\/no_service at x: /)
  })

  it("refuses a services file that is not one (mandate/bad_services_file) and leaves it as it was; refuses a linked file", async () => {
    const h = homes()
    writeSeed(h.home, "agent.key", AGENT)
    const file = join(h.home, "services.json")
    for (const body of ["[]", "{not json", `{"services":[{"name":"a","url":"yea://x:1"}]}`, `{"services":[{"name":"a","url":"yea://x:1","id":"i"},{"name":"a","url":"yea://y:1","id":"j"}]}`]) {
      writeFileSync(file, body)
      chmodSync(file, 0o600)
      expect(errorLine(await mandate(["yea", "services"], h.env))).toMatch(/^error: mandate\/bad_services_file at /)
      expect(errorLine(await mandate(["yea", "add", "b", "yea://127.0.0.1:1", "--no-check"], h.env))).toMatch(/^error: mandate\/bad_services_file at /)
      expect(readFileSync(file, "utf8")).toBe(body)
    }
    const other = homes()
    writeSeed(other.home, "agent.key", AGENT)
    symlinkSync(file, join(other.home, "services.json"))
    expect(errorLine(await mandate(["yea", "services"], other.env))).toMatch(/^error: mandate\/symlink at /)
  })
})
