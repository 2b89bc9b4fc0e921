// The project's own Writ corpus (conformance/vectors, written by scripts/conformance.ts):
// regeneration is byte-for-byte stable, every vector has the section 14 shape, the corpus covers
// every vector operation and every reason code a verifier can give, and the project's conformance
// runner passes all of it.
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { corpusDir, writeCorpus } from "../../scripts/conformance.js"
import { SMALL_ORDER } from "../support/writ-builders.js"
import { runConformance, formatFailure } from "../../src/writ/conformance.js"
import { sharedPath } from "../support/shared.js"

const jsonFiles = (dir: string): Array<string> => readdirSync(dir).filter((f) => f.endsWith(".json")).sort()
const checkedIn = jsonFiles(corpusDir)
const vectors = checkedIn.map((f) => ({ file: f, v: JSON.parse(readFileSync(join(corpusDir, f), "utf8")) as Record<string, unknown> }))

describe("conformance/vectors regenerate unchanged", () => {
  const tmp = mkdtempSync(join(tmpdir(), "writ-corpus-"))
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it("scripts/conformance.ts writes exactly the checked-in files, byte for byte", () => {
    writeCorpus(tmp)
    const fresh = jsonFiles(tmp)
    expect(fresh).toEqual(checkedIn)
    const changed = fresh.filter((f) => !readFileSync(join(tmp, f)).equals(readFileSync(join(corpusDir, f))))
    expect(changed).toEqual([])
  })

  it("a second generation in the same process is identical to the first", () => {
    const again = mkdtempSync(join(tmpdir(), "writ-corpus-again-"))
    try {
      writeCorpus(again)
      const differs = jsonFiles(again).filter((f) => !readFileSync(join(again, f)).equals(readFileSync(join(tmp, f))))
      expect(differs).toEqual([])
    } finally {
      rmSync(again, { recursive: true, force: true })
    }
  })
})

// Section 14 lists nine operations; the shared vector schema predates `check_ack` (2026-09-30) and
// the codes `ack_mismatch` and `total_exhausted`, which section 11 defines. Both lists are read from
// the schema and extended by exactly those spec additions.
const SPEC_OPS_AFTER_SCHEMA = ["check_ack"]
const SPEC_REASONS_AFTER_SCHEMA = ["ack_mismatch", "total_exhausted"]
const INPUT_MEMBERS: Record<string, { readonly required: ReadonlyArray<string>; readonly allowed: ReadonlyArray<string> }> = {
  canonicalize: { required: ["raw"], allowed: ["raw", "canonical"] },
  narrows: { required: ["child", "parent"], allowed: ["child", "parent"] },
  satisfies: { required: ["bound", "arg"], allowed: ["bound", "arg"] },
  verify_writ: { required: ["writ"], allowed: ["writ"] },
  verify_chain: { required: ["chain"], allowed: ["chain"] },
  verify_call: { required: ["call"], allowed: ["call"] },
  verify_tally: { required: ["writ", "call", "tally"], allowed: ["writ", "call", "tally", "res"] },
  verify_revoke: { required: ["revoke"], allowed: ["revoke"] },
  check_ack: { required: ["revoke", "ack", "res", "chain", "tally"], allowed: ["revoke", "ack", "res", "chain", "tally"] }
}

const schemaFile = sharedPath("reference", "writ", "schema", "vector.schema.json")

describe.skipIf(!schemaFile)("every vector has the section 14 shape (vector.schema.json)", () => {
  const schema = schemaFile ? (JSON.parse(readFileSync(schemaFile, "utf8")) as any) : undefined
  const ops: Array<string> = schema ? [...schema.properties.op.enum, ...SPEC_OPS_AFTER_SCHEMA] : []
  const reasons: Array<string> = schema ? [...schema.$defs.reason.enum, ...SPEC_REASONS_AFTER_SCHEMA] : []

  it("top-level members, op, expect, reason, now", () => {
    const bad: Array<string> = []
    for (const { file, v } of vectors) {
      const keys = Object.keys(v)
      for (const k of keys) if (!Object.keys(schema.properties).includes(k)) bad.push(`${file}: extra member ${k}`)
      for (const k of schema.required as Array<string>) if (!(k in v)) bad.push(`${file}: missing ${k}`)
      if (typeof v.name !== "string" || v.name.length === 0) bad.push(`${file}: name`)
      if (!ops.includes(String(v.op))) bad.push(`${file}: op ${String(v.op)}`)
      if (v.expect !== "accept" && v.expect !== "reject") bad.push(`${file}: expect`)
      if (v.expect === "reject" && !reasons.includes(String(v.reason))) bad.push(`${file}: reason ${String(v.reason)}`)
      if (v.expect === "accept" && "reason" in v) bad.push(`${file}: accept with a reason`)
      if ("now" in v && !Number.isInteger(v.now)) bad.push(`${file}: now`)
      if (typeof v.input !== "object" || v.input === null || Array.isArray(v.input)) bad.push(`${file}: input`)
    }
    expect(bad).toEqual([])
  })

  it("input members per operation", () => {
    const bad: Array<string> = []
    for (const { file, v } of vectors) {
      const spec = INPUT_MEMBERS[String(v.op)]
      const input = v.input as Record<string, unknown>
      for (const k of spec.required) if (!(k in input)) bad.push(`${file}: input lacks ${k}`)
      for (const k of Object.keys(input)) if (!spec.allowed.includes(k)) bad.push(`${file}: input has ${k}`)
      if (v.op === "canonicalize") {
        if (typeof input.raw !== "string") bad.push(`${file}: raw`)
        if (v.expect === "accept" && typeof input.canonical !== "string") bad.push(`${file}: canonical`)
      }
      if ((v.op === "verify_chain" || v.op === "check_ack") && !Array.isArray(input.chain)) bad.push(`${file}: chain`)
    }
    expect(bad).toEqual([])
  })
})

describe("coverage", () => {
  const count = (pred: (v: Record<string, unknown>) => boolean) => vectors.filter(({ v }) => pred(v)).length

  it("every operation of section 14 has accepted and rejected vectors", () => {
    for (const op of Object.keys(INPUT_MEMBERS)) {
      expect(count((v) => v.op === op && v.expect === "accept"), `${op} accept`).toBeGreaterThan(0)
      expect(count((v) => v.op === op && v.expect === "reject"), `${op} reject`).toBeGreaterThan(0)
    }
  })

  // Every section 11 code a stateless verifier can give. The others (root_not_accepted,
  // wrong_executor, peer_mismatch, count_exhausted, total_exhausted, not_reversible, undeliverable,
  // unknown_outcome) need executor state and belong to section 14.1 scenarios.
  const VERIFIER_REASONS = [
    "too_large", "noncanonical", "unsupported_version", "wrong_type", "unsupported_critical", "malformed", "bad_key",
    "bad_signature", "chain_broken", "not_narrowed", "unknown_bound", "expired", "no_standing", "forbidden_op",
    "missing_arg", "out_of_bounds", "tally_mismatch", "sub_unmatched", "ack_mismatch", "revoked"
  ]
  it("every reason code a verifier can give is expected by some vector", () => {
    const missing = VERIFIER_REASONS.filter((r) => count((v) => v.reason === r) === 0)
    expect(missing).toEqual([])
  })

  it("all 14 small-order encodings appear as a key (bad_key) and as a signature R (bad_signature)", () => {
    expect(SMALL_ORDER.length).toBe(14)
    expect(new Set(SMALL_ORDER.map(([, hex]) => hex)).size).toBe(14)
    for (const [label] of SMALL_ORDER) {
      expect(count((v) => v.name === `small order holder ${label}` && v.reason === "bad_key"), label).toBe(1)
      expect(count((v) => v.name === `signature R small order ${label}` && v.reason === "bad_signature"), label).toBe(1)
    }
  })

  it("the nesting limit: 64 accepted, 65 too_large, too_large before number rules", () => {
    const byName = (n: string) => vectors.find(({ v }) => v.name === n)?.v
    expect(byName("nesting at the limit 64 arrays")?.expect).toBe("accept")
    expect(byName("nesting 65 arrays")?.reason).toBe("too_large")
    expect(byName("nesting 65 before the fraction inside")?.reason).toBe("too_large")
    expect(byName("fraction at nesting 64 is noncanonical")?.reason).toBe("noncanonical")
    expect(byName("writ at nesting 64")?.expect).toBe("accept")
    expect(byName("writ nesting 65 before the fraction inside")?.reason).toBe("too_large")
  })
})

describe("the project's conformance runner over conformance/vectors", () => {
  it("every vector passes", async () => {
    const results = await Effect.runPromise(runConformance(corpusDir).pipe(Effect.provide(NodeContext.layer)))
    expect(results.length).toBe(checkedIn.length)
    expect(results.filter((r) => !r.pass).map(formatFailure)).toEqual([])
  })
})
