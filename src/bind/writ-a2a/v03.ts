// A2A 0.3, read for compatibility and written to a peer that spoke it: its shapes (a `kind` on
// every object and part, roles `user`/`agent`, lower-case states, a part's media type as
// `metadata.mimeType` or `file.mimeType`) and their conversion to and from the 1.0 shapes of
// ./schema.ts, which are the only ones the binding itself works on. Method names differ too:
// `message/send`, `message/stream`, `tasks/get`, `tasks/cancel` (1.0: `SendMessage`, ...).
import { Schema } from "effect"
import type { JsonObject } from "../../kernel/json.js"
import {
  type Artifact, JsonRecord, type Message, Metadata, type Part, type Role, type Task, type TaskState
} from "./schema.js"

export const V03TextPart = Schema.Struct({ kind: Schema.Literal("text"), text: Schema.String, metadata: Schema.optional(Metadata) })
export const V03DataPart = Schema.Struct({ kind: Schema.Literal("data"), data: JsonRecord, metadata: Schema.optional(Metadata) })
export const V03File = Schema.Struct({
  uri: Schema.optional(Schema.String),
  bytes: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String)
}).pipe(Schema.filter((f) => (f.uri === undefined) !== (f.bytes === undefined) || "a file holds exactly one of uri or bytes"))
export const V03FilePart = Schema.Struct({ kind: Schema.Literal("file"), file: V03File, metadata: Schema.optional(Metadata) })
export const V03Part = Schema.Union(V03TextPart, V03DataPart, V03FilePart)
export type V03Part = typeof V03Part.Type

export const V03Role = Schema.Literal("user", "agent")

export const V03Message = Schema.Struct({
  kind: Schema.Literal("message"),
  messageId: Schema.String,
  role: V03Role,
  parts: Schema.Array(V03Part),
  metadata: Schema.optional(Metadata),
  taskId: Schema.optional(Schema.String),
  contextId: Schema.optional(Schema.String),
  extensions: Schema.optional(Schema.Array(Schema.String)),
  referenceTaskIds: Schema.optional(Schema.Array(Schema.String))
})
export type V03Message = typeof V03Message.Type

export const V03Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  parts: Schema.Array(V03Part),
  metadata: Schema.optional(Metadata),
  extensions: Schema.optional(Schema.Array(Schema.String))
})
export type V03Artifact = typeof V03Artifact.Type

export const V03TaskState = Schema.Literal(
  "submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"
)
export type V03TaskState = typeof V03TaskState.Type

export const V03Task = Schema.Struct({
  kind: Schema.Literal("task"),
  id: Schema.String,
  contextId: Schema.String,
  status: Schema.Struct({ state: V03TaskState, message: Schema.optional(V03Message), timestamp: Schema.optional(Schema.String) }),
  artifacts: Schema.optional(Schema.Array(V03Artifact)),
  history: Schema.optional(Schema.Array(V03Message)),
  metadata: Schema.optional(Metadata)
})
export type V03Task = typeof V03Task.Type

/** `message/send` parameters (0.3 `MessageSendParams`). */
export const V03SendParams = Schema.Struct({
  message: V03Message,
  configuration: Schema.optional(JsonRecord),
  metadata: Schema.optional(Metadata)
})
/** `message/send`'s result: a task or a message, told apart by `kind`. */
export const V03SendResult = Schema.Union(V03Task, V03Message)
/** `tasks/cancel` parameters (0.3 `TaskIdParams`). */
export const V03TaskIdParams = Schema.Struct({ id: Schema.String, metadata: Schema.optional(Metadata) })
/** `tasks/get` parameters (0.3 `TaskQueryParams`). */
export const V03TaskQueryParams = Schema.Struct({ id: Schema.String, historyLength: Schema.optional(Schema.Int), metadata: Schema.optional(Metadata) })

/** The 1.0 JSON-RPC method a 0.3 method name stands for. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/cancel": "CancelTask"
}
export const V10_TO_V03_METHODS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(V03_METHODS).map(([a, b]) => [b, a]))

const STATES: ReadonlyArray<readonly [V03TaskState, TaskState]> = [
  ["submitted", "TASK_STATE_SUBMITTED"],
  ["working", "TASK_STATE_WORKING"],
  ["input-required", "TASK_STATE_INPUT_REQUIRED"],
  ["completed", "TASK_STATE_COMPLETED"],
  ["canceled", "TASK_STATE_CANCELED"],
  ["failed", "TASK_STATE_FAILED"],
  ["rejected", "TASK_STATE_REJECTED"],
  ["auth-required", "TASK_STATE_AUTH_REQUIRED"]
]

/** A 0.3 state as 1.0 (0.3's `unknown` has no 1.0 value; it is read as submitted: nothing final). */
export const stateFromV03 = (s: V03TaskState): TaskState => STATES.find(([a]) => a === s)?.[1] ?? "TASK_STATE_SUBMITTED"
export const stateToV03 = (s: TaskState): V03TaskState => STATES.find(([, b]) => b === s)?.[0] ?? "unknown"

const roleFromV03 = (r: "user" | "agent"): Role => (r === "user" ? "ROLE_USER" : "ROLE_AGENT")
const roleToV03 = (r: Role): "user" | "agent" => (r === "ROLE_USER" ? "user" : "agent")

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** A 0.3 part as 1.0: a data part's `metadata.mimeType` becomes its `mediaType` (the rest of the
 * metadata stays), a file becomes `url` or `raw` with its media type and name. */
export const partFromV03 = (p: V03Part): Part => {
  switch (p.kind) {
    case "text":
      return { text: p.text, ...optional("metadata", p.metadata) }
    case "data": {
      const { mimeType, ...rest } = p.metadata ?? {}
      return {
        data: p.data,
        ...(typeof mimeType === "string" ? { mediaType: mimeType } : {}),
        // The media type moved out of the metadata; what else the metadata held stays in it.
        ...(p.metadata === undefined || (typeof mimeType === "string" && Object.keys(rest).length === 0)
          ? {}
          : { metadata: typeof mimeType === "string" ? rest : p.metadata })
      }
    }
    case "file":
      return {
        ...(p.file.uri !== undefined ? { url: p.file.uri } : { raw: p.file.bytes ?? "" }),
        ...optional("mediaType", p.file.mimeType),
        ...optional("filename", p.file.name),
        ...optional("metadata", p.metadata)
      }
  }
}

/** A 1.0 part as 0.3. A data part whose value is not an object (0.3 data is an object) is sent
 * wrapped as `{"value": ...}`; this binding never writes one. */
export const partToV03 = (p: Part): V03Part => {
  if (p.text !== undefined) return { kind: "text", text: p.text, ...optional("metadata", p.metadata) }
  if (p.data !== undefined) {
    const data = typeof p.data === "object" && p.data !== null && !Array.isArray(p.data) ? p.data as JsonObject : { value: p.data }
    const metadata = p.mediaType === undefined ? p.metadata : { ...p.metadata, mimeType: p.mediaType }
    return { kind: "data", data, ...optional("metadata", metadata) }
  }
  return {
    kind: "file",
    file: { ...(p.url !== undefined ? { uri: p.url } : { bytes: p.raw ?? "" }), ...optional("mimeType", p.mediaType), ...optional("name", p.filename) },
    ...optional("metadata", p.metadata)
  }
}

export const messageFromV03 = (m: V03Message): Message => ({
  messageId: m.messageId,
  role: roleFromV03(m.role),
  parts: m.parts.map(partFromV03),
  ...optional("contextId", m.contextId),
  ...optional("taskId", m.taskId),
  ...optional("metadata", m.metadata),
  ...optional("extensions", m.extensions),
  ...optional("referenceTaskIds", m.referenceTaskIds)
})

export const messageToV03 = (m: Message): V03Message => ({
  kind: "message",
  messageId: m.messageId,
  role: roleToV03(m.role),
  parts: m.parts.map(partToV03),
  ...optional("contextId", m.contextId),
  ...optional("taskId", m.taskId),
  ...optional("metadata", m.metadata),
  ...optional("extensions", m.extensions),
  ...optional("referenceTaskIds", m.referenceTaskIds)
})

const artifactFromV03 = (a: V03Artifact): Artifact => ({ ...a, parts: a.parts.map(partFromV03) })
const artifactToV03 = (a: Artifact): V03Artifact => ({ ...a, parts: a.parts.map(partToV03) })

export const taskFromV03 = (t: V03Task): Task => ({
  id: t.id,
  contextId: t.contextId,
  status: {
    state: stateFromV03(t.status.state),
    ...optional("message", t.status.message === undefined ? undefined : messageFromV03(t.status.message)),
    ...optional("timestamp", t.status.timestamp)
  },
  ...optional("artifacts", t.artifacts?.map(artifactFromV03)),
  ...optional("history", t.history?.map(messageFromV03)),
  ...optional("metadata", t.metadata)
})

export const taskToV03 = (t: Task): V03Task => ({
  kind: "task",
  id: t.id,
  contextId: t.contextId,
  status: {
    state: stateToV03(t.status.state),
    ...optional("message", t.status.message === undefined ? undefined : messageToV03(t.status.message)),
    ...optional("timestamp", t.status.timestamp)
  },
  ...optional("artifacts", t.artifacts?.map(artifactToV03)),
  ...optional("history", t.history?.map(messageToV03)),
  ...optional("metadata", t.metadata)
})

