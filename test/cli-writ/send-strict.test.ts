// Strict reading on every path, for `mandate writ send`. An answer that is not
// strict JSON (section 1.1) is `noncanonical` at the object within the answer that holds the fault
// (an ack, a tally in `tallies`, an ack relayed in `fwd`, the `res` body), not at the whole answer.
// A loopback HTTP server answers crafted bytes; the client reads them as `writ send` does.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { postWrit } from "../../src/bind/writ-http/client.js"
import { strictAnswer } from "../../src/cli/writ-send.js"

/** A loopback server answering every POST with `answer`, closed with the scope. */
const crafted = (answer: string) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; close: () => void }>((resume) => {
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(answer))
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/writ`, close: () => server.close() }))
      })
    }),
    (s) => Effect.sync(s.close)
  )

const failureOf = (answer: string) =>
  Effect.gen(function*() {
    const { url } = yield* crafted(answer)
    const posted = yield* postWrit(url, { typ: "revoke" })
    const e = yield* Effect.flip(strictAnswer(url, posted))
    return { reason: e.reason, path: e.path === url ? "URL" : e.path, message: e.message }
  })

const ack = (inner: string) => `{"iss":"did:key:z6Mk","out":"x",${inner}"typ":"ack"}`
const tally = (inner: string) => `{"call":"c","st":"done",${inner}"typ":"tally"}`

describe("strict reading (section 1.1) on the writ send path", () => {
  it.scoped("strict reading on the writ send path blames the embedded object that holds a duplicate member", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`{"ack":${ack(`"rcv":"a","rcv":"b",`)},"res":{"held":[],"open":[]},"tallies":[]}`, "ack"],
        [`{"ack":${ack("")},"res":{"held":[],"open":[],"held":[]},"tallies":[]}`, "res"],
        [`{"ack":${ack("")},"res":{"held":[],"open":[]},"tallies":[${tally(`"used":{"n":1,"n":2},`)}]}`, "tallies[0]"],
        [`{"ack":${ack("")},"fwd":[{"ack":${ack("")},"res":{}},{"ack":${ack(`"sig":"a","sig":"b",`)},"res":{}}],"res":{}}`, "fwd[1].ack"],
        [`{"tally":${tally(`"sub":[${tally(`"op":"x","op":"y",`)}],`)},"res":{"v":1}}`, "tally"]
      ]
      for (const [answer, path] of cases) {
        const f = yield* failureOf(answer)
        expect([path, f.reason, f.path]).toEqual([path, "noncanonical", path])
        expect(f.message).toMatch(/duplicate|repeated/i)
      }
    }))

  it.scoped("strict reading on the writ send path blames the embedded object that holds a lone surrogate", () =>
    Effect.gen(function*() {
      const f = yield* failureOf(`{"ack":${ack("")},"fwd":[{"ack":${ack(`"note":"\\ud800",`)},"res":{}}],"res":{}}`)
      expect([f.reason, f.path]).toEqual(["noncanonical", "fwd[0].ack"])
      const g = yield* failureOf(`{"tally":${tally("")},"res":{"text":"\\udc00x"}}`)
      expect([g.reason, g.path]).toEqual(["noncanonical", "res"])
    }))

  it.scoped("a fault in the answer's own members, or an answer that is not JSON, is blamed on the answer at the URL", () =>
    Effect.gen(function*() {
      const dup = yield* failureOf(`{"ack":${ack("")},"ack":${ack("")},"res":{}}`)
      expect([dup.reason, dup.path]).toEqual(["noncanonical", "URL"])
      const garbage = yield* failureOf(`{"ack":`)
      expect([garbage.reason, garbage.path]).toEqual(["noncanonical", "URL"])
    }))

  it.scoped("a strict answer reads as its value", () =>
    Effect.gen(function*() {
      const { url } = yield* crafted(`{"error":"malformed"}`)
      const posted = yield* postWrit(url, { typ: "revoke" })
      expect(yield* strictAnswer(url, posted)).toEqual({ error: "malformed" })
    }))
})
