// The generated JSON Schemas (schema/writ, draft 2020-12) validated by ajv against the corpora:
// the shared reference vectors (read in place from ../shared, skipped with a notice when absent)
// and the project's own conformance/vectors. Every object of an accepted vector is accepted by its
// schema, and by its Effect Schema; a `verify_writ` vector refused for a rule a JSON Schema states
// (shape, bound values, `crit`, version, type: everything but a key's point, the signature and the
// size) is refused by the schema too. The malformed writs below (no act, a
// mistyped bound, ...) are refused outright.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { corpusDir } from "../../scripts/conformance.js"
import { type Json, type JsonObject, parseJson } from "../../src/kernel/json.js"
import { Ack } from "../../src/writ/ack.js"
import { Call } from "../../src/writ/call.js"
import { Revoke } from "../../src/writ/revoke.js"
import { Tally } from "../../src/writ/tally.js"
import { checkWrit, Writ } from "../../src/writ/writ.js"
import { jsonSchemaAccepts, type WritObjectType } from "../support/json-schema.js"
import { sharedPath } from "../support/shared.js"

const effectSchemas: Record<WritObjectType, Schema.Schema<any, any>> = { writ: Writ, call: Call, tally: Tally, revoke: Revoke, ack: Ack }

interface Vector {
  readonly file: string
  readonly op: string
  readonly expect: "accept" | "reject"
  readonly reason?: string
  readonly input: JsonObject
}

/** The vectors of `dir` that the strict reader can read (a few carry a duplicate member or a
 * fraction on purpose; those test the reader, not a schema). */
const readVectors = (dir: string): ReadonlyArray<Vector> =>
  readdirSync(dir).filter((f) => f.endsWith(".json")).sort().flatMap((file) => {
    const r = parseJson(readFileSync(join(dir, file), "utf8"), { maxDepth: 256, integersOnly: true })
    return Either.isRight(r) ? [{ file, ...(r.right as unknown as Omit<Vector, "file">) }] : []
  })

/** The signed objects in a vector's input, by type (section 14's input shapes). */
const objectsOf = (v: Vector): ReadonlyArray<readonly [WritObjectType, Json]> => {
  const i = v.input
  const writs = (c: Json | undefined) => (Array.isArray(c) ? c.map((w) => ["writ", w] as const) : [])
  switch (v.op) {
    case "verify_writ": return [["writ", i.writ]]
    case "verify_chain": return writs(i.chain)
    case "verify_call": return [["call", i.call]]
    case "verify_tally": return [["writ", i.writ], ["call", i.call], ["tally", i.tally]]
    case "verify_revoke": return [["revoke", i.revoke]]
    case "check_ack": return [["revoke", i.revoke], ["ack", i.ack], ["tally", i.tally], ...writs(i.chain)]
    default: return []
  }
}

/** Section 6.1 reasons whose rule the JSON Schema states for a writ. */
const STATED = ["malformed", "noncanonical", "unknown_bound", "unsupported_critical", "unsupported_version", "wrong_type"]

const corpora: ReadonlyArray<readonly [string, string | undefined]> = [
  ["the shared reference vectors", sharedPath("reference", "writ", "vectors")],
  ["conformance/vectors", corpusDir]
]

for (const [name, dir] of corpora) {
  describe.skipIf(dir === undefined)(`the JSON Schemas against ${name}`, () => {
    const vectors = dir === undefined ? [] : readVectors(dir)

    it("every object of an accepted vector is accepted by its JSON Schema and its Effect Schema", () => {
      const accepted = vectors.filter((v) => v.expect === "accept" && objectsOf(v).length > 0)
      expect(accepted.length).toBeGreaterThan(10)
      for (const v of accepted) {
        for (const [type, o] of objectsOf(v)) {
          expect(jsonSchemaAccepts(type, o), `${v.file} ${type}`).toEqual({ ok: true })
          expect(Either.isRight(Schema.decodeUnknownEither(effectSchemas[type])(o)), `${v.file} ${type}`).toBe(true)
        }
      }
    })

    it("a writ refused for a rule the JSON Schema states is refused by it", () => {
      const refused = vectors.filter((v) => v.op === "verify_writ" && v.expect === "reject" && STATED.includes(v.reason ?? ""))
      expect(refused.length).toBeGreaterThan(10)
      const lax = refused.filter((v) => jsonSchemaAccepts("writ", v.input.writ).ok).map((v) => v.file)
      expect(lax).toEqual([])
    })
  })
}

describe("malformed writs the JSON Schema refuses outright", () => {
  const valid = readVectors(corpusDir).find((v) => v.op === "verify_writ" && v.expect === "accept")!.input.writ as JsonObject
  const bnd = valid.bnd as JsonObject
  const cases: ReadonlyArray<readonly [string, JsonObject, string]> = [
    ["a writ with no act", { ...valid, bnd: Object.fromEntries(Object.entries(bnd).filter(([n]) => n !== "act")) }, "malformed"],
    ["an act that is a max", { ...valid, bnd: { ...bnd, act: { t: "max", v: 1 } } }, "malformed"],
    ["a reversed window", { ...valid, bnd: { ...bnd, date: { t: "window", v: [20270131, 20270101] } } }, "noncanonical"],
    ["a repeated set element", { ...valid, bnd: { ...bnd, currency: { t: "set", v: ["EUR", "GBP", "EUR"] } } }, "noncanonical"],
    ["a depth that is a count", { ...valid, bnd: { ...bnd, depth: { t: "count", v: 1 } } }, "malformed"]
  ]

  it("the valid writ they start from is accepted", () => {
    expect(jsonSchemaAccepts("writ", valid)).toEqual({ ok: true })
  })

  for (const [name, writ, reason] of cases) {
    it.effect(`${name}: refused by the verifier (${reason}), the Effect Schema and the JSON Schema`, () =>
      Effect.gen(function* () {
        const verdict = yield* Effect.flip(checkWrit(writ))
        expect(verdict.reason).toBe(reason)
        expect(Either.isLeft(Schema.decodeUnknownEither(Writ)(writ))).toBe(true)
        expect(jsonSchemaAccepts("writ", writ).ok).toBe(false)
      }))
  }
})
