// `mandate yea do` (in process, through the CLI's run function) against two example services on
// HTTP bridges over loopback (shop.example and calendar.example): the saved grants sent to each
// service are those whose `svc` caveat names it (§6.3); an unknown capability gets the closest real
// one as a hint; the bridge takes frames on `/` as well as `/yea`.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import { serveHttpBridge } from "../../src/bind/yea-http/server.js"
import { AGENT, PRINCIPAL } from "../yea/_helpers.js"
import { calendar as calendarRuntime, shop as shopRuntime, stores } from "../yea-service/support.js"
import { errorLine, homes, mandate, writeSeed } from "./run.js"

const T = 120_000
const h = homes()
writeSeed(h.home, "agent.key", AGENT)
writeSeed(h.principalHome, "principal.key", PRINCIPAL)
const scope = Effect.runSync(Scope.make())
let shopUrl = ""
let calendarUrl = ""
let shopPort = 0

beforeAll(async () => {
  const [shop, calendar] = await Effect.runPromise(
    Effect.all([shopRuntime, calendarRuntime]).pipe(
      Effect.flatMap((rts) => Effect.forEach(rts, (rt) => serveHttpBridge(rt, { host: "127.0.0.1", port: 0 }))),
      Effect.provide(stores),
      Scope.extend(scope)
    )
  )
  shopUrl = shop.url
  shopPort = shop.port
  calendarUrl = calendar.url
}, T)
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const search = ["ASK", "shop.search", "--params", '{"tag":"vegan"}', "--json"]
const find = ["ASK", "calendar.find", "--params", "{}", "--json"]

describe("mandate yea do with grants for two services", () => {
  it("each service gets only the saved grants whose svc names it; a --grant is sent as given", async () => {
    const save = async (svc: string) => expect((await mandate(["yea", "grant", "--svc", svc, "--verbs", "ASK", "--exp", "1h"], h.env)).status).toBe(0)
    // Only a calendar grant saved: the shop gets no grant, so the read is anonymous (sent, the
    // calendar grant would make it forbidden, as below).
    await save("calendar.example")
    const alone = await mandate(["yea", "do", shopUrl, ...search], h.env)
    expect(alone.stderr).toBe("")
    expect(JSON.parse(alone.stdout).kind).toBe("ANSWER")
    await save("shop.example")
    const shop = await mandate(["yea", "do", shopUrl, ...search], h.env)
    expect(shop.stderr).toBe("")
    expect(JSON.parse(shop.stdout).kind).toBe("ANSWER")
    const calendar = await mandate(["yea", "do", calendarUrl, ...find], h.env)
    expect(calendar.stderr).toBe("")
    expect(JSON.parse(calendar.stdout).kind).toBe("ANSWER")
    // The calendar grant at the shop is refused: what the filter keeps the saved one from doing.
    const calendarGrant = (await mandate(["yea", "grant", "--svc", "calendar.example", "--verbs", "ASK", "--exp", "1h", "--no-save"], h.env)).stdout.match(/pg1\.[A-Za-z0-9_-]+/)![0]
    const given = await mandate(["yea", "do", shopUrl, ...search, "--no-saved-grants", "--grant", calendarGrant], h.env)
    expect(given.status).toBe(1)
    expect(errorLine(given)).toMatch(/^error: forbidden at ASK shop\.search: /)
  }, T)

  it("an unknown capability names the closest one the service offers", async () => {
    const typo = await mandate(["yea", "do", shopUrl, "ASK", "shop.serch", "--no-saved-grants"], h.env)
    expect(typo.status).toBe(1)
    expect(errorLine(typo)).toMatch(/^error: unknown_capability at ASK shop\.serch: .*; did you mean shop\.search\?$/)
    const other = await mandate(["yea", "do", calendarUrl, "ASK", "calendar.fnd", "--no-saved-grants"], h.env)
    expect(errorLine(other)).toMatch(/did you mean calendar\.find\?$/)
  }, T)

  it("the bridge takes frames on / as well as /yea, and yea do works with a URL ending in /", async () => {
    const root = `http://127.0.0.1:${shopPort}/`
    expect(shopUrl).toBe(`http://127.0.0.1:${shopPort}/yea`)
    for (const path of ["/", "/yea"]) {
      const res = await fetch(`http://127.0.0.1:${shopPort}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ yea: 1, id: "c_1", verb: "HELLO" }) })
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("application/x-ndjson")
      expect(JSON.parse((await res.text()).trim()).kind).toBe("BRIEF")
    }
    expect((await fetch(`http://127.0.0.1:${shopPort}/other`, { method: "POST", body: "{}" })).status).toBe(404)
    const hello = await mandate(["yea", "do", root, "HELLO", "--no-saved-grants", "--json"], h.env)
    expect(hello.stderr).toBe("")
    expect(JSON.parse(hello.stdout).kind).toBe("BRIEF")
    const ask = await mandate(["yea", "do", root, ...search], h.env)
    expect(JSON.parse(ask.stdout).kind).toBe("ANSWER")
  }, T)
})
