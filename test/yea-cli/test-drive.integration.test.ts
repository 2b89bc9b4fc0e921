// `mandate yea test-drive` in this process: the example shop on loopback, a HELLO, ASK, INTENT,
// COMMIT tour that ends in a receipt, and nothing written to the YEA home.
import { describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { homes, mandate } from "./run.js"

describe("mandate yea test-drive", () => {
  it("tours HELLO, ASK, INTENT and COMMIT against the example shop and leaves the home untouched", async () => {
    const h = homes()
    const r = await mandate(["yea", "test-drive"], h.env)
    expect(r.status, r.stderr).toBe(0)
    const steps = r.stdout.split("\n").filter((l) => l.startsWith("> ")).map((l) => l.split(":")[0])
    expect(steps).toEqual(["> HELLO", "> ASK shop.search", "> INTENT shop.order", expect.stringMatching(/^> COMMIT \S+$/)])
    expect(r.stdout).toMatch(/receipt r_/)
    expect(r.stdout).toContain("yea://127.0.0.1:")
    expect(existsSync(h.home)).toBe(false)
    expect(existsSync(h.principalHome)).toBe(false)
  })
})
