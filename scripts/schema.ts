// `npm run schema`: writes one JSON Schema per wire object, generated from the Effect Schemas that
// decode them (effect's `JSONSchema.make`), so the published shapes cannot drift from the code.
//
//   schema/writ/<object>.schema.json   writ, call, tally, revoke, ack, ack-body (Writ v0.1 sections 2, 5, 6, 9.1, 9.4)
//   schema/yea/<object>.schema.json    the wire-object Schemas src/yea exports
//
// Writ: JSON Schema draft 2020-12. The signed objects are open (section 1.7: unknown members are ignored,
// but signed) because their Effect Schemas carry an index signature; bounds and other nested shapes
// are closed. A JSON Schema says what shape an object has; it cannot say what only section 6.1 can
// check (a did:key point's order, signatures, the order of checks and their reason codes), nor
// compare two members of one instance: a window's lo <= hi is stated by the keyword
// `x-nondecreasing` (see src/writ/bound.ts). Those stay in the verifier.
// `test/writ-corpus/schema.test.ts` regenerates into memory and fails when a checked-in file differs.
import { JSONSchema, type Schema } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Ack, AckBody, Call, Revoke, Tally, Writ } from "../src/writ/index.js"
import { Caveat } from "../src/yea/caveat.js"
import { ConsentRequest } from "../src/yea/reason.js"
import { DelegationPayload, RawBlock, RootPayload } from "../src/yea/grant.js"
import { Proof } from "../src/yea/proof.js"
import { Proposal } from "../src/yea/proposal.js"
import * as Frame from "../src/yea/frame.js"

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySchema = Schema.Schema<any, any, never>

/** Relative output path -> the Effect Schema it is generated from. */
export const schemas: ReadonlyArray<readonly [string, AnySchema]> = [
  ["writ/writ.schema.json", Writ],
  ["writ/call.schema.json", Call],
  ["writ/tally.schema.json", Tally as AnySchema],
  ["writ/revoke.schema.json", Revoke],
  ["writ/ack.schema.json", Ack],
  ["writ/ack-body.schema.json", AckBody],
  ["yea/grant-block.schema.json", RawBlock],
  ["yea/grant-root-payload.schema.json", RootPayload],
  ["yea/grant-delegation-payload.schema.json", DelegationPayload],
  ["yea/caveat.schema.json", Caveat],
  ["yea/proposal.schema.json", Proposal],
  ["yea/proof.schema.json", Proof],
  ["yea/consent-request.schema.json", ConsentRequest],
  // YEA frames (SPEC §2, §4, §5, §7): one file per request verb and reply kind, and the two unions.
  ["yea/frame-request.schema.json", Frame.RequestFrame],
  ["yea/frame-hello.schema.json", Frame.HelloFrame],
  ["yea/frame-ask.schema.json", Frame.AskFrame],
  ["yea/frame-intent.schema.json", Frame.IntentFrame],
  ["yea/frame-commit.schema.json", Frame.CommitFrame],
  ["yea/frame-undo.schema.json", Frame.UndoFrame],
  ["yea/frame-expand.schema.json", Frame.ExpandFrame],
  ["yea/frame-reply.schema.json", Frame.ReplyFrame],
  ["yea/frame-brief.schema.json", Frame.BriefFrame],
  ["yea/frame-answer.schema.json", Frame.AnswerFrame],
  ["yea/frame-proposals.schema.json", Frame.ProposalsFrame],
  ["yea/frame-clarify.schema.json", Frame.ClarifyFrame],
  ["yea/frame-receipt.schema.json", Frame.ReceiptFrame],
  ["yea/frame-error.schema.json", Frame.ErrorFrame],
  ["yea/frame-event.schema.json", Frame.EventFrame]
]

/**
 * YEA §2.1: receivers MUST ignore unknown fields, and the frame Schemas decode that way, so every
 * object in a frame schema is opened. A `uses` map (the object with `propertyNames`) keeps its
 * quantities closed: §5.1 makes an extra member a malformed quantity.
 */
const openFrameObjects = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(openFrameObjects)
  if (typeof node !== "object" || node === null) return
  const o = node as Record<string, unknown>
  if (o.propertyNames !== undefined) return
  if (o.type === "object" && o.additionalProperties === false) o.additionalProperties = true
  for (const v of Object.values(o)) openFrameObjects(v)
}

const isFrameFile = (file: string): boolean => file.startsWith("yea/frame-")

/** Effect's `Int` is a safe integer; JSON Schema's `integer` is unbounded, so the bounds are written out. */
const boundIntegers = (root: unknown): void => {
  const int = (root as { $defs?: Record<string, Record<string, unknown>> }).$defs?.Int
  if (int !== undefined && int.type === "integer") {
    int.minimum = -Number.MAX_SAFE_INTEGER
    int.maximum = Number.MAX_SAFE_INTEGER
  }
}

/** Schemas `JSONSchema.make` cannot render yet, with the reason (reported, not written). */
export interface Skipped {
  readonly file: string
  readonly reason: string
}

/** The text of every schema file, keyed by its path relative to `schema/`. Deterministic: effect
 * emits members in declaration order, and the text is pretty-printed with a trailing newline. A
 * schema that needs an annotation its owner has not added yet (e.g. a `Schema.declare` without a
 * `jsonSchema` annotation) is listed in `skipped` instead of failing the whole run. */
export const render = (): { readonly files: ReadonlyArray<readonly [string, string]>; readonly skipped: ReadonlyArray<Skipped> } => {
  const files: Array<readonly [string, string]> = []
  const skipped: Array<Skipped> = []
  for (const [file, s] of schemas) {
    try {
      // Writ schemas are draft 2020-12 (validated by ajv in test/writ-corpus); YEA's stay draft-07,
      // the dialect test/yea-frame's validator reads.
      const json = JSONSchema.make(s, { target: file.startsWith("writ/") ? "jsonSchema2020-12" : "jsonSchema7" })
      if (isFrameFile(file)) {
        openFrameObjects(json)
        boundIntegers(json)
      }
      files.push([file, JSON.stringify(json, null, 2) + "\n"])
    } catch (e) {
      skipped.push({ file, reason: String(e instanceof Error ? e.message : e).split("\n").slice(0, 3).join(" ") })
    }
  }
  return { files, skipped }
}

export const schemaRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "schema")

export const writeAll = (root: string = schemaRoot): { readonly written: ReadonlyArray<string>; readonly skipped: ReadonlyArray<Skipped> } => {
  const { files, skipped } = render()
  const written = files.map(([file, text]) => {
    const target = join(root, file)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, text)
    return target
  })
  return { written, skipped }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { written, skipped } = writeAll()
  for (const f of written) console.log(`wrote ${f}`)
  for (const s of skipped) console.log(`skipped ${s.file}: ${s.reason}`)
}
