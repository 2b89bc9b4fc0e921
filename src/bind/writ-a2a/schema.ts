// The A2A shapes this binding reads and writes (docs/adoption.md section 2b; A2A 1.0 field names,
// to be checked against the A2A version a deployment runs: docs/bindings.md says the same of the
// reference). One Effect Schema per object; members this binding does not use are kept by the
// transport, never by us: each Schema decodes only what it reads.
import { Schema } from "effect"
import type { Json } from "../../kernel/json.js"

/** Writ's media types and metadata keys in A2A (adoption.md 2b). */
export const CALL_MEDIA_TYPE = "application/writ-call+json"
export const TALLY_MEDIA_TYPE = "application/writ-tally+json"
export const RESULT_MEDIA_TYPE = "application/json"
export const CALL_KEY = "io.writ/call"
export const TALLY_KEY = "io.writ/tally"
export const REVOKE_KEY = "io.writ/revoke"
export const ACK_KEY = "io.writ/ack"
export const ERROR_KEY = "io.writ/error"
/** The Agent Card extension's URI (adoption.md 2b). */
export const EXTENSION_URI = "https://writ.dev/ext/delegation/v1"

const JsonValue: Schema.Schema<Json> = Schema.declare((u: unknown): u is Json => u !== undefined, { identifier: "Json" })
const JsonRecord = Schema.Record({ key: Schema.String, value: JsonValue })
export type JsonRecord = typeof JsonRecord.Type

/** `metadata` of a part, message or artifact: any object; `mimeType` is the member we look at. */
export const Metadata = JsonRecord

export const TextPart = Schema.Struct({
  kind: Schema.Literal("text"),
  text: Schema.String,
  metadata: Schema.optional(Metadata)
})
export const DataPart = Schema.Struct({
  kind: Schema.Literal("data"),
  data: JsonRecord,
  metadata: Schema.optional(Metadata)
})
export type DataPart = typeof DataPart.Type
export const FilePart = Schema.Struct({
  kind: Schema.Literal("file"),
  file: JsonRecord,
  metadata: Schema.optional(Metadata)
})
export const Part = Schema.Union(TextPart, DataPart, FilePart)
export type Part = typeof Part.Type

export const Role = Schema.Literal("user", "agent")

export const Message = Schema.Struct({
  kind: Schema.Literal("message"),
  messageId: Schema.String,
  role: Role,
  parts: Schema.Array(Part),
  metadata: Schema.optional(Metadata),
  taskId: Schema.optional(Schema.String),
  contextId: Schema.optional(Schema.String)
})
export type Message = typeof Message.Type

export const Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: Schema.optional(Schema.String),
  parts: Schema.Array(Part),
  metadata: Schema.optional(Metadata)
})
export type Artifact = typeof Artifact.Type

export const TaskState = Schema.Literal(
  "submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"
)
export type TaskState = typeof TaskState.Type

export const TaskStatus = Schema.Struct({
  state: TaskState,
  message: Schema.optional(Message),
  timestamp: Schema.optional(Schema.String)
})
export type TaskStatus = typeof TaskStatus.Type

export const Task = Schema.Struct({
  kind: Schema.Literal("task"),
  id: Schema.String,
  contextId: Schema.String,
  status: TaskStatus,
  artifacts: Schema.optional(Schema.Array(Artifact)),
  metadata: Schema.optional(Metadata)
})
export type Task = typeof Task.Type

/** `tasks/cancel` parameters: the task, and metadata carrying a revoke (adoption.md 2b). */
export const CancelTaskParams = Schema.Struct({
  id: Schema.String,
  metadata: Schema.optional(Metadata)
})
export type CancelTaskParams = typeof CancelTaskParams.Type

/** The Agent Card's `capabilities.extensions` entry (adoption.md 2b). */
export const CardExtension = Schema.Struct({
  uri: Schema.Literal(EXTENSION_URI),
  description: Schema.String,
  required: Schema.Boolean,
  params: Schema.Struct({
    did: Schema.String,
    bounds: Schema.Array(Schema.String),
    maxChain: Schema.Int.pipe(Schema.between(1, 8))
  })
})
export type CardExtension = typeof CardExtension.Type
