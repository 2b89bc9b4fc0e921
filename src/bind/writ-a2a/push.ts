// A2A push notifications (A2A 1.0 sections 3.1.7 to 3.1.10, 4.3.3, 13.2): the configs a client sets
// for a task, and the POST of the task to each of them when the task changes state.
//
// A webhook URL is the client's, and the request to it is the agent's: left open, any client could
// make this endpoint send requests to any host it can reach (its loopback, its private network).
// So a URL is taken only when the operator's allow list (`--push-allow`: hosts, or URL prefixes)
// names it, checked when the config is set and again before each request; redirects are never
// followed (a listed host could send the request on to one that is not). Without an allow list
// there is no A2aPush service, and every push method is refused (`mandate/a2a_push_not_supported`).
//
// The request goes through @effect/platform's HttpClient (A2aWebhook, a Layer: tests serve a local
// webhook). Each change and config is delivered on a fiber the service's scope owns, with a 10
// second timeout per attempt; a failed attempt (no answer, not 2xx) is retried on PUSH_RETRY, a
// bounded exponential Schedule on the Clock (section 4.3.3: at least once; retries are a MAY). Before
// every attempt the config is read again (one deleted meanwhile is not sent to) and its URL checked
// against the allow list again. Each delivery's outcome is recorded (`deliveries`, the latest
// MAX_DELIVERY_RECORDS) and a failure logged; it is never the task's business.
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Context, Data, Effect, FiberSet, Layer, Ref, Schedule, Schema, type Scope } from "effect"
import { encodeCanonical, utf8 } from "../../kernel/canonical.js"
import type { Json } from "../../kernel/json.js"
import { a2aError, type A2aError } from "./errors.js"
import type { Task, TaskPushNotificationConfig } from "./schema.js"

/** The header a config's token is sent in when it has no authentication (the A2A SDK's name). */
export const NOTIFICATION_TOKEN_HEADER = "x-a2a-notification-token"
/** Configs one task holds, and configs the endpoint holds in all: memory is bounded. */
export const MAX_CONFIGS_PER_TASK = 8
export const MAX_CONFIGS = 4096
/** Section 4.3.3: "a reasonable timeout (recommended: 10-30 seconds)". */
export const WEBHOOK_TIMEOUT = "10 seconds"
/** Retries of a failed attempt: after 1, 2, 4 and 8 seconds (five attempts in all, within a
 * minute of the change; a webhook down longer misses it: deliveries are not kept across that). */
export const PUSH_RETRY = Schedule.exponential("1 second", 2).pipe(Schedule.intersect(Schedule.recurs(4)))
export const PUSH_ATTEMPTS = 5
/** Delivery records kept (the latest): memory is bounded. */
export const MAX_DELIVERY_RECORDS = 256

/** One delivery of one change to one config, as it ended: delivered (a 2xx), failed (every attempt
 * failed), refused (its URL is no longer on the allow list: no request), or dropped (the config
 * was deleted before an attempt). */
export const DeliveryRecord = Schema.Struct({
  taskId: Schema.String, configId: Schema.String, url: Schema.String, state: Schema.String,
  outcome: Schema.Literal("delivered", "failed", "refused", "dropped"),
  attempts: Schema.Int,
  /** The Clock's time the delivery ended, milliseconds. */
  at: Schema.Number,
  error: Schema.optional(Schema.String)
})
export type DeliveryRecord = typeof DeliveryRecord.Type

/** One allow list entry: a host (`hooks.example.com`, `127.0.0.1:8080`: any port when none is
 * given), or a URL prefix (`https://hooks.example.com/a2a/`), which the whole URL must start with. */
export type AllowEntry = { readonly _tag: "host"; readonly host: string; readonly port?: string } | { readonly _tag: "prefix"; readonly prefix: string }

const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/

/** Reads `--push-allow` entries; a malformed one is named. */
export const parseAllowList = (entries: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<AllowEntry>, A2aError> =>
  Effect.forEach(entries, (raw) => {
    const entry = raw.trim()
    if (entry.includes("://")) {
      const url = URL.canParse(entry) ? new URL(entry) : undefined
      return url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== ""
        ? Effect.fail(a2aError("mandate/a2a_push_url_refused", "--push-allow", `${raw}: a URL prefix is http(s), without credentials`))
        : Effect.succeed<AllowEntry>({ _tag: "prefix", prefix: url.href })
    }
    const m = HOST.exec(entry)
    return m === null
      ? Effect.fail(a2aError("mandate/a2a_push_url_refused", "--push-allow", `${raw}: not a host, host:port or http(s) URL prefix`))
      : Effect.succeed<AllowEntry>({ _tag: "host", host: m[1].toLowerCase(), ...(m[2] === undefined ? {} : { port: m[2] }) })
  })

/** Whether `url` is a webhook the list names: http(s), no credentials in it, and a host or prefix
 * entry matching it (the URL as parsed, so `HTTP://Host:80/` and `http://host/` are one). */
export const allowedUrl = (allow: ReadonlyArray<AllowEntry>, url: string): boolean => {
  if (!URL.canParse(url)) return false
  const u = new URL(url)
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username !== "" || u.password !== "") return false
  const port = u.port === "" ? (u.protocol === "https:" ? "443" : "80") : u.port
  return allow.some((e) =>
    e._tag === "prefix" ? u.href.startsWith(e.prefix) : u.hostname.toLowerCase() === e.host && (e.port === undefined || e.port === port)
  )
}

/** A webhook request that did not get a 2xx answer. */
export class WebhookError extends Data.TaggedError("WebhookError")<{ readonly message: string }> {}

/** POSTs a push notification: the status, or a failure. */
export class A2aWebhook extends Context.Tag("mandate/A2aWebhook")<A2aWebhook, {
  readonly post: (url: string, headers: Readonly<Record<string, string>>, body: Uint8Array) => Effect.Effect<number, WebhookError>
}>() {
  /** Through the HttpClient in context, which must not follow redirects (undici's does not). */
  static layer: Layer.Layer<A2aWebhook, never, HttpClient.HttpClient> = Layer.effect(
    A2aWebhook,
    Effect.map(HttpClient.HttpClient, (client) => ({
      post: (url, headers, body) =>
        client.execute(HttpClientRequest.post(url).pipe(
          HttpClientRequest.bodyUint8Array(body, "application/json"),
          HttpClientRequest.setHeaders(headers)
        )).pipe(
          Effect.flatMap((r) => Effect.as(r.text, r.status)),
          Effect.scoped,
          Effect.timeoutFail({ duration: WEBHOOK_TIMEOUT, onTimeout: () => new WebhookError({ message: `${url}: no answer in ${WEBHOOK_TIMEOUT}` }) }),
          Effect.catchTags({
            RequestError: (e) => Effect.fail(new WebhookError({ message: `${url}: ${e.message}` })),
            ResponseError: (e) => Effect.fail(new WebhookError({ message: `${url}: ${e.message}` }))
          }),
          Effect.filterOrFail((status) => status >= 200 && status < 300, (status) => new WebhookError({ message: `${url}: status ${status}` }))
        )
    }))
  )
}

/** A config as kept: its id always set. */
export type PushConfig = TaskPushNotificationConfig & { readonly id: string }

export interface A2aPushService {
  /** Creates or replaces (same id) a config, after its URL is checked; the id is the client's, else the next `push-N`. */
  readonly set: (config: TaskPushNotificationConfig) => Effect.Effect<PushConfig, A2aError>
  readonly get: (taskId: string, id: string) => Effect.Effect<PushConfig, A2aError>
  readonly list: (taskId: string) => Effect.Effect<ReadonlyArray<PushConfig>>
  /** Idempotent (section 3.1.10): a config that is not there is already deleted. */
  readonly remove: (taskId: string, id: string) => Effect.Effect<void>
  /** The task changed state: POST it (a StreamResponse `{"task"}`, section 4.3.3) to each of its configs. */
  readonly notify: (task: Task) => Effect.Effect<void>
  /** Checks a URL against the list as `set` does, for a config not yet tied to a task. */
  readonly check: (url: string) => Effect.Effect<void, A2aError>
  /** The latest deliveries, as they ended (oldest first). */
  readonly deliveries: Effect.Effect<ReadonlyArray<DeliveryRecord>>
}

/** The config as answered: the credentials are write-only (a client that set them has them). */
export const configJson = (c: PushConfig): Json => {
  const { authentication, ...rest } = c
  return { ...rest, ...(authentication === undefined ? {} : { authentication: { scheme: authentication.scheme } }) } as Json
}

export class A2aPush extends Context.Tag("mandate/A2aPush")<A2aPush, A2aPushService>() {
  /** Push notifications to the webhooks `allow` names (parsed by parseAllowList). */
  static layer = (allow: ReadonlyArray<AllowEntry>): Layer.Layer<A2aPush, never, A2aWebhook> =>
    Layer.scoped(A2aPush, make(allow))
}

interface PushState {
  readonly next: number
  readonly total: number
  readonly byTask: ReadonlyMap<string, ReadonlyMap<string, PushConfig>>
}

const make = (allow: ReadonlyArray<AllowEntry>): Effect.Effect<A2aPushService, never, A2aWebhook | Scope.Scope> =>
  Effect.gen(function*() {
    const webhook = yield* A2aWebhook
    const deliveries = yield* FiberSet.make()
    const state = yield* Ref.make<PushState>({ next: 1, total: 0, byTask: new Map() })
    const records = yield* Ref.make<ReadonlyArray<DeliveryRecord>>([])
    const check = (url: string) =>
      allowedUrl(allow, url)
        ? Effect.void
        : Effect.fail(a2aError("mandate/a2a_push_url_refused", "params.url", `${url} is not on this endpoint's webhook allow list (--push-allow); no request is made to it`))
    const set = (config: TaskPushNotificationConfig) =>
      Effect.zipRight(
        check(config.url),
        Effect.flatten(Ref.modify(state, (s): [Effect.Effect<PushConfig, A2aError>, PushState] => {
          const held = s.byTask.get(config.taskId) ?? new Map<string, PushConfig>()
          const id = config.id !== undefined && config.id !== "" ? config.id : `push-${s.next}`
          const replacing = held.has(id)
          if (!replacing && (held.size >= MAX_CONFIGS_PER_TASK || s.total >= MAX_CONFIGS)) {
            return [Effect.fail(a2aError("mandate/a2a_push_config_limit", "params", `task ${config.taskId} holds ${held.size} push configs (at most ${MAX_CONFIGS_PER_TASK}; ${MAX_CONFIGS} in all)`)), s]
          }
          const kept: PushConfig = { ...config, id }
          const byTask = new Map(s.byTask)
          byTask.set(config.taskId, new Map(held).set(id, kept))
          return [Effect.succeed<PushConfig>(kept), { next: config.id !== undefined && config.id !== "" ? s.next : s.next + 1, total: s.total + (replacing ? 0 : 1), byTask }]
        }))
      )
    const list = (taskId: string) => Effect.map(Ref.get(state), (s) => [...(s.byTask.get(taskId)?.values() ?? [])])
    const deliver = (task: Task, c: PushConfig) => {
      const headers: Record<string, string> = {
        ...(c.token !== undefined && c.token !== "" ? { [NOTIFICATION_TOKEN_HEADER]: c.token } : {}),
        ...(c.authentication?.credentials !== undefined && c.authentication.credentials !== ""
          ? { authorization: `${c.authentication.scheme} ${c.authentication.credentials}` }
          : {})
      }
      // A decoded Task is JSON by its Schema; the cast states what its optional members' type cannot.
      const body = utf8(encodeCanonical({ task: task as unknown as Json }, "utf16"))
      return Effect.gen(function*() {
        const attempts = yield* Ref.make(0)
        // Before each attempt: the config as it is now (deleted: dropped), its URL checked again
        // (the list is the only way out); only a failed request is retried.
        const attempt = Effect.gen(function*() {
          const now = (yield* Ref.get(state)).byTask.get(task.id)?.get(c.id)
          if (now === undefined) return "dropped" as const
          yield* check(now.url)
          yield* Ref.update(attempts, (n) => n + 1)
          yield* webhook.post(now.url, headers, body)
          return "delivered" as const
        })
        const ended = yield* attempt.pipe(
          Effect.retry({ schedule: PUSH_RETRY, while: (e) => e._tag === "WebhookError" }),
          Effect.either
        )
        const outcome = ended._tag === "Right" ? ended.right : ended.left._tag === "WebhookError" ? "failed" as const : "refused" as const
        const record: DeliveryRecord = {
          taskId: task.id,
          configId: c.id,
          url: c.url,
          state: task.status.state,
          outcome,
          attempts: yield* Ref.get(attempts),
          at: yield* Clock.currentTimeMillis,
          ...(ended._tag === "Left" ? { error: ended.left.message } : {})
        }
        yield* Ref.update(records, (rs) => [...rs, record].slice(-MAX_DELIVERY_RECORDS))
        if (outcome === "failed" || outcome === "refused") {
          yield* Effect.logWarning(`push notification for task ${task.id} to ${c.url} not delivered (${outcome}, ${record.attempts} attempts): ${record.error ?? ""}`)
        }
      })
    }
    return {
      set,
      get: (taskId, id) =>
        Effect.flatMap(Ref.get(state), (s) => {
          const c = s.byTask.get(taskId)?.get(id)
          return c === undefined ? Effect.fail(a2aError("mandate/a2a_push_config_not_found", "params.id", `task ${taskId} has no push config ${id}`)) : Effect.succeed(c)
        }),
      list,
      remove: (taskId, id) =>
        Ref.update(state, (s) => {
          const held = s.byTask.get(taskId)
          if (held?.has(id) !== true) return s
          const next = new Map(held)
          next.delete(id)
          const byTask = new Map(s.byTask)
          if (next.size === 0) byTask.delete(taskId)
          else byTask.set(taskId, next)
          return { ...s, total: s.total - 1, byTask }
        }),
      notify: (task) =>
        Effect.flatMap(list(task.id), (configs) => Effect.forEach(configs, (c) => FiberSet.run(deliveries, deliver(task, c)), { discard: true })),
      check,
      deliveries: Ref.get(records)
    }
  })
