// The A2A 1.0 shapes this binding reads and writes (docs/adoption.md section 2b; A2A 1.0, whose
// JSON is the ProtoJSON form of its `lf.a2a.v1` messages: no `kind` discriminator, a part is one of
// `text`/`data`/`url`/`raw` with its `mediaType` beside it, roles `ROLE_*`, states `TASK_STATE_*`).
// A2A 0.3 is read and written by ./v03.ts, which converts to and from these. One Effect Schema per
// object; members this binding does not use are kept by the transport, never by us: each Schema
// decodes only what it reads.
import { Schema } from "effect"
import type { Json } from "../../kernel/json.js"

/** Writ's media types and metadata keys in A2A (adoption.md 2b). */
export const CALL_MEDIA_TYPE = "application/writ-call+json"
export const TALLY_MEDIA_TYPE = "application/writ-tally+json"
export const RESULT_MEDIA_TYPE = "application/json"
/** The section 10 answer to a revoke, as the artifact of a canceled task. */
export const ANSWER_MEDIA_TYPE = "application/writ+json"
export const CALL_KEY = "io.writ/call"
export const TALLY_KEY = "io.writ/tally"
export const REVOKE_KEY = "io.writ/revoke"
export const ACK_KEY = "io.writ/ack"
export const ERROR_KEY = "io.writ/error"
/** The Agent Card extension's URI (adoption.md 2b). */
export const EXTENSION_URI = "https://writ.dev/ext/delegation/v1"

/** The header a revoke rides in on the HTTP+JSON binding's cancel when the request has no body to
 * carry it (./rest.ts): the base64url of its canonical JSON. The A2A SDK's REST transport sends a
 * cancel without a body, and its REST server drops a cancel body's metadata; both pass headers. */
export const REVOKE_HEADER = "writ-revoke"

/** The protocol bindings an Agent Card names (A2A 1.0 `AgentInterface.protocolBinding`). */
export const JSONRPC_BINDING = "JSONRPC"
export const REST_BINDING = "HTTP+JSON"
/** The HTTP+JSON binding's media type (the SDK sends and accepts application/json too). */
export const A2A_JSON_MEDIA_TYPE = "application/a2a+json"

/** Where an agent publishes its Agent Card (A2A 1.0 and 0.3). */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json"

/** The protocol versions this binding speaks: 1.0, and 0.3 for peers that have not moved. */
export const A2A_VERSION = "1.0"
export const A2A_LEGACY_VERSION = "0.3"
export type A2aVersion = typeof A2A_VERSION | typeof A2A_LEGACY_VERSION

export const JsonValue: Schema.Schema<Json> = Schema.declare((u: unknown): u is Json => u !== undefined, { identifier: "Json" })
export const JsonRecord = Schema.Record({ key: Schema.String, value: JsonValue })
export type JsonRecord = typeof JsonRecord.Type

/** `metadata` of a part, message, artifact or request: any object. */
export const Metadata = JsonRecord

/** A 1.0 part: exactly one of `text`, `data` (any JSON value), `url` or `raw` (base64), with its
 * media type and file name beside it (A2A 1.0 `Part`, a `oneof content`). */
export const Part = Schema.Struct({
  text: Schema.optional(Schema.String),
  data: Schema.optional(JsonValue),
  url: Schema.optional(Schema.String),
  raw: Schema.optional(Schema.String),
  mediaType: Schema.optional(Schema.String),
  filename: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata)
}).pipe(Schema.filter((p) =>
  [p.text, p.data, p.url, p.raw].filter((c) => c !== undefined).length === 1 || "a part holds exactly one of text, data, url or raw"
))
export type Part = typeof Part.Type

export const Role = Schema.Literal("ROLE_USER", "ROLE_AGENT")
export type Role = typeof Role.Type

/** A list ProtoJSON leaves out when it is empty. */
const list = <A, I>(item: Schema.Schema<A, I>) => Schema.optionalWith(Schema.Array(item), { default: () => [] })

export const Message = Schema.Struct({
  messageId: Schema.String,
  role: Role,
  parts: list(Part),
  contextId: Schema.optional(Schema.String),
  taskId: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata),
  extensions: Schema.optional(Schema.Array(Schema.String)),
  referenceTaskIds: Schema.optional(Schema.Array(Schema.String))
})
export type Message = typeof Message.Type
export type MessageJson = typeof Message.Encoded

export const Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  parts: list(Part),
  metadata: Schema.optional(Metadata),
  extensions: Schema.optional(Schema.Array(Schema.String))
})
export type Artifact = typeof Artifact.Type

export const TaskState = Schema.Literal(
  "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"
)
export type TaskState = typeof TaskState.Type

export const TaskStatus = Schema.Struct({
  state: TaskState,
  message: Schema.optional(Message),
  timestamp: Schema.optional(Schema.String)
})
export type TaskStatus = typeof TaskStatus.Type

export const Task = Schema.Struct({
  id: Schema.String,
  contextId: Schema.String,
  status: TaskStatus,
  artifacts: Schema.optional(Schema.Array(Artifact)),
  history: Schema.optional(Schema.Array(Message)),
  metadata: Schema.optional(Metadata)
})
export type Task = typeof Task.Type

/** `SendMessage` parameters (A2A 1.0 `SendMessageRequest`). */
export const SendMessageRequest = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  message: Message,
  configuration: Schema.optional(JsonRecord),
  metadata: Schema.optional(Metadata)
})
export type SendMessageRequest = typeof SendMessageRequest.Type

/** `SendMessage`'s result: a task or a message, named by its member (A2A 1.0 `SendMessageResponse`). */
export const SendMessageResponse = Schema.Union(Schema.Struct({ task: Task }), Schema.Struct({ message: Message }))
export type SendMessageResponse = typeof SendMessageResponse.Type

/** `CancelTask` parameters: the task, and metadata carrying a revoke (adoption.md 2b). */
export const CancelTaskParams = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  id: Schema.String,
  metadata: Schema.optional(Metadata)
})
export type CancelTaskParams = typeof CancelTaskParams.Type

/** `GetTask` parameters. */
export const GetTaskParams = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  id: Schema.String,
  historyLength: Schema.optional(Schema.Int)
})
export type GetTaskParams = typeof GetTaskParams.Type

/** The terminal states (A2A 1.0 section 3.1.6): a task in one takes no subscriber. */
export const TERMINAL_STATES: ReadonlyArray<TaskState> = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]
export const isTerminal = (state: TaskState): boolean => TERMINAL_STATES.includes(state)

/** `ListTasks` parameters (A2A 1.0 `ListTasksRequest`, section 3.1.4): filters, a page of 1 to
 * 100 (default 50), a cursor, history and artifacts trimmed. */
export const ListTasksRequest = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  contextId: Schema.optional(Schema.String),
  status: Schema.optional(TaskState),
  pageSize: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  pageToken: Schema.optional(Schema.String),
  historyLength: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** ISO 8601 (section 5.6.1): only tasks whose status changed after it. */
  statusTimestampAfter: Schema.optional(Schema.String),
  includeArtifacts: Schema.optional(Schema.Boolean)
})
export type ListTasksRequest = typeof ListTasksRequest.Type

/** `SubscribeToTask` parameters. */
export const SubscribeToTaskRequest = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  id: Schema.String.pipe(Schema.minLength(1))
})

/** How the agent authenticates to a webhook (A2A 1.0 `AuthenticationInfo`): an HTTP scheme and its credentials. */
export const AuthenticationInfo = Schema.Struct({
  scheme: Schema.String,
  credentials: Schema.optional(Schema.String)
})

/** A push notification config (A2A 1.0 `TaskPushNotificationConfig`). The `id` is the server's
 * when the client gives none. */
export const TaskPushNotificationConfig = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  taskId: Schema.String.pipe(Schema.minLength(1)),
  url: Schema.String.pipe(Schema.minLength(1)),
  token: Schema.optional(Schema.String),
  authentication: Schema.optional(AuthenticationInfo)
})
export type TaskPushNotificationConfig = typeof TaskPushNotificationConfig.Type

/** `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig` parameters. */
export const TaskPushNotificationConfigRef = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  taskId: Schema.String.pipe(Schema.minLength(1)),
  id: Schema.String.pipe(Schema.minLength(1))
})

/** `ListTaskPushNotificationConfigs` parameters (a task holds few configs: one page, always). */
export const ListTaskPushNotificationConfigsRequest = Schema.Struct({
  tenant: Schema.optional(Schema.String),
  taskId: Schema.String.pipe(Schema.minLength(1)),
  pageSize: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  pageToken: Schema.optional(Schema.String)
})

/** What `SendMessage`'s `configuration` is read for: a push config to register for the task. */
export const SendMessageConfiguration = Schema.Struct({
  taskPushNotificationConfig: Schema.optional(Schema.Struct({
    id: Schema.optional(Schema.String),
    url: Schema.String.pipe(Schema.minLength(1)),
    token: Schema.optional(Schema.String),
    authentication: Schema.optional(AuthenticationInfo)
  }))
})

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

/** An Agent Card's interface (A2A 1.0 `AgentInterface`). */
export const AgentInterface = Schema.Struct({
  url: Schema.String,
  protocolBinding: Schema.String,
  protocolVersion: Schema.optional(Schema.String),
  tenant: Schema.optional(Schema.String)
})
export type AgentInterface = typeof AgentInterface.Type

/**
 * What a client reads of an Agent Card: the 1.0 `supportedInterfaces`, or a 0.3 card's `url`,
 * `protocolVersion` and `preferredTransport`, and the extensions it declares.
 */
export const AgentCard = Schema.Struct({
  name: Schema.String,
  supportedInterfaces: Schema.optional(Schema.Array(AgentInterface)),
  url: Schema.optional(Schema.String),
  protocolVersion: Schema.optional(Schema.String),
  preferredTransport: Schema.optional(Schema.String),
  capabilities: Schema.optional(Schema.Struct({
    streaming: Schema.optional(Schema.Boolean),
    extensions: Schema.optional(Schema.Array(Schema.Struct({ uri: Schema.String, params: Schema.optional(JsonRecord) })))
  }))
})
export type AgentCard = typeof AgentCard.Type
