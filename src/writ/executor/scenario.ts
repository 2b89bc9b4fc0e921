// Executor scenarios, spec section 14.1: a scenario file's Schema and a runner that plays its steps
// against the real executor over a store Layer, with the clock set by each step, the application
// scripted by each step's `app`, held operations finished by `finish` steps, and `restart` as a
// crash: every running operation is dropped, the store is reopened, pending records are resolved.
// Answers compare by canonical form (section 1.2).
import { Cause, Context, Deferred, Duration, Effect, Either, Exit, Fiber, Option, ParseResult, Schema, Scope } from "effect"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import { isJsonObject, type Json, type JsonObject, parseJson } from "../../kernel/json.js"
import { Signer } from "../../kernel/services.js"
import { DEFAULT_VERIFICATION_CACHE_BYTES, VerificationCache } from "../../kernel/verification-cache.js"
import { canonicalText, identity } from "../sign.js"
import { Received } from "../verify.js"
import { callAnswerJson, type CallAnswer, type ExecutorService, makeExecutorWith, revokeAnswerJson } from "./executor.js"
import { Application, Forwarder, type Operation, type Outcome, Peer, PeerBindings, RootPolicy } from "./services.js"
import { settableClock } from "./settable-clock.js"
import type { StoreError, WritStores } from "./stores.js"

// ---------------------------------------------------------------------------------------------
// The file (schema/scenario.schema.json of the reference corpus)

/** Any JSON value (the file is read as JSON; its calls and expectations are data here). */
const JsonValue: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number,
  Schema.String,
  Schema.Array(Schema.suspend((): Schema.Schema<Json> => JsonValue)),
  Schema.Record({ key: Schema.String, value: Schema.suspend((): Schema.Schema<Json> => JsonValue) })
)
const IntS = Schema.Int

export const ScriptedApp = Schema.Struct({
  st: Schema.Literal("ok", "failed", "canceled", ""),
  code: Schema.optional(Schema.String),
  res: Schema.optional(JsonValue),
  used: Schema.optional(Schema.Record({ key: Schema.String, value: IntS })),
  rev: Schema.optional(IntS),
  hold: Schema.optional(Schema.Boolean)
})
export type ScriptedApp = typeof ScriptedApp.Type

const note = Schema.optional(Schema.String)

export const CallStep = Schema.Struct({
  do: Schema.Literal("call"),
  note,
  now: IntS,
  call: JsonValue,
  app: Schema.optional(ScriptedApp),
  peer: Schema.optional(Schema.String),
  expect: JsonValue
})
export const RevokeStep = Schema.Struct({ do: Schema.Literal("revoke"), note, now: IntS, revoke: JsonValue, expect: JsonValue })
export const FinishStep = Schema.Struct({
  do: Schema.Literal("finish"),
  note,
  call: Schema.String,
  app: ScriptedApp,
  signaled: Schema.Boolean,
  expect: JsonValue
})
export const RestartStep = Schema.Struct({ do: Schema.Literal("restart"), note, expect: JsonValue })
export const Step = Schema.Union(CallStep, RevokeStep, FinishStep, RestartStep)
export type Step = typeof Step.Type

export const Scenario = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1)),
  executor: Schema.Struct({
    seed: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
    accept: Schema.Array(Schema.String),
    peers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }))
  }),
  steps: Schema.Array(Step).pipe(Schema.minItems(1))
})
export type Scenario = typeof Scenario.Type

export class ScenarioFileError extends Schema.TaggedError<ScenarioFileError>()("ScenarioFileError", {
  file: Schema.String,
  message: Schema.String
}) {}

/**
 * Reads a scenario file's text. The strict reader keeps every member exactly (duplicates and the
 * like are errors, not silently merged), with no integer rule and a generous depth, so that a call
 * the executor must refuse for those reasons reaches it intact.
 */
export const decodeScenario = (file: string, text: string): Effect.Effect<Scenario, ScenarioFileError> =>
  Effect.gen(function*() {
    const strict = parseJson(text, { integersOnly: false, maxDepth: 100_000 })
    // A file whose calls carry what section 1.1 forbids (a lone surrogate escape) is still a
    // scenario: read it leniently, and the executor, reading the call's bytes strictly, refuses it.
    const value = Either.isRight(strict)
      ? strict.right
      : yield* Effect.try({
        try: () => JSON.parse(text) as Json,
        catch: () => new ScenarioFileError({ file, message: strict.left.message })
      })
    return yield* Schema.decodeUnknown(Scenario)(value).pipe(
      Effect.mapError((e) => new ScenarioFileError({ file, message: ParseResult.TreeFormatter.formatErrorSync(e) }))
    )
  })

// ---------------------------------------------------------------------------------------------
// Store backends

export type StoreContext = WritStores | Reservations | Atomic

/**
 * A durable store for one scenario. `open` returns the store's services within `scope`: the
 * first time an empty store, after a restart the same store again (a memory store keeps its
 * instance; a file store reopens its file).
 */
export interface ScenarioStore {
  readonly name: string
  readonly open: (scope: Scope.Scope) => Effect.Effect<Context.Context<StoreContext>, StoreError>
}

// ---------------------------------------------------------------------------------------------
// The runner

export interface StepFailure {
  readonly step: number
  readonly message: string
}

export interface ScenarioResult {
  readonly name: string
  readonly failures: ReadonlyArray<StepFailure>
}

/** How long a call may go unanswered, without its application holding it, before it counts as in flight. */
const WAIT_SECONDS = 3
/** How long any step may take before the runner reports it and moves on. */
const STEP_TIMEOUT_SECONDS = 60


const hexBytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)))

const toOutcome = (app: ScriptedApp): Outcome => ({
  st: app.st === "" ? "failed" : app.st,
  ...(app.code !== undefined ? { code: app.code } : {}),
  ...(app.res !== undefined ? { res: app.res } : {}),
  ...(app.used !== undefined ? { used: app.used } : {}),
  ...(app.rev !== undefined ? { rev: app.rev } : {})
})

const short = (v: Json): string => {
  let t: string
  try {
    t = canonicalText(v)
  } catch {
    t = String(v)
  }
  return t.length > 600 ? `${t.slice(0, 600)}...` : t
}


interface Held {
  readonly outcome: Deferred.Deferred<Outcome>
  readonly operation: Operation
  readonly fiber: Deferred.Deferred<Fiber.RuntimeFiber<CallAnswer>>
}

/** Runs one scenario against the executor over `store`; every failed step is reported. */
export const runScenario = (scenario: Scenario, store: ScenarioStore): Effect.Effect<ScenarioResult> =>
  Effect.gen(function*() {
    const failures: Array<StepFailure> = []
    // The time the scenario sets (section 14.1 `now`); sleeping uses the clock in context.
    const time = settableClock(yield* Effect.clock)
    const holds = new Map<string, Held>()
    let current: { index: number; app: ScriptedApp | undefined; entered: Deferred.Deferred<string> | undefined } = {
      index: -1,
      app: undefined,
      entered: undefined
    }

    // The scripted application: a step's `app` is the outcome of the operation performed during it.
    const application = Application.of({
      perform: (operation) =>
        Effect.gen(function*() {
          const step = current
          if (step.app === undefined) {
            failures.push({ step: step.index, message: `the application was invoked (${operation.op}) on a step with no app` })
            return { st: "failed", code: "scenario/unexpected_invocation" } as Outcome
          }
          if (step.app.hold === true) {
            const outcome = yield* Deferred.make<Outcome>()
            const fiber = yield* Deferred.make<Fiber.RuntimeFiber<CallAnswer>>()
            holds.set(operation.callId, { outcome, operation, fiber })
            if (step.entered !== undefined) yield* Deferred.succeed(step.entered, operation.callId)
            return yield* Deferred.await(outcome)
          }
          return toOutcome(step.app)
        })
    })

    const services = Context.make(Signer, Signer.make(hexBytes(scenario.executor.seed))).pipe(
      Context.add(Application, application),
      Context.add(RootPolicy, { accepts: (k: string) => Effect.succeed(scenario.executor.accept.includes(k)) }),
      Context.add(PeerBindings, {
        speaksFor: (p: string, k: string) => Effect.succeed((scenario.executor.peers?.[p] ?? []).includes(k))
      }),
      Context.add(Forwarder, { forward: () => Effect.succeed(Option.none()) }),
      // Each scenario's executor owns a cache of its own, as a served one does.
      Context.add(VerificationCache, VerificationCache.make({ maxBytes: DEFAULT_VERIFICATION_CACHE_BYTES }))
    )

    let scope = yield* Scope.make()
    const start = Effect.gen(function*() {
      const stores = yield* store.open(scope)
      // The executor lives in the same scope as its stores; closing it is a crash: accepted work
      // is interrupted at once (no grace), its pending records left for recovery (section 9).
      return yield* makeExecutorWith({ shutdownGrace: 0 }).pipe(
        Effect.provide(Context.merge(services, stores)),
        Scope.extend(scope)
      )
    })
    const opened = yield* Effect.either(start)
    if (Either.isLeft(opened)) {
      yield* Scope.close(scope, Exit.void)
      return { name: scenario.name, failures: [{ step: -1, message: `store did not open: ${opened.left.message}` }] }
    }
    let executor: ExecutorService = opened.right
    const fibers = new Map<string, Fiber.RuntimeFiber<CallAnswer>>()
    const withTime = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.withClock(self, time.clock)

    /** A step's effect, reported as a failed step if it dies or does not answer in time. */
    const guarded = <A>(index: number, self: Effect.Effect<A>): Effect.Effect<Option.Option<A>> =>
      self.pipe(
        Effect.timeoutFail({ duration: Duration.seconds(STEP_TIMEOUT_SECONDS), onTimeout: () => "no answer in time" }),
        Effect.exit,
        Effect.map((exit) => {
          if (Exit.isSuccess(exit)) return Option.some(exit.value)
          failures.push({ step: index, message: `the executor failed: ${Cause.pretty(exit.cause).split("\n")[0]}` })
          return Option.none()
        })
      )

    const compare = (index: number, step: Step, actual: Json) => {
      let same = false
      try {
        same = canonicalText(actual) === canonicalText(step.expect)
      } catch {
        same = false
      }
      if (!same) {
        failures.push({
          step: index,
          message: `${step.do}${step.note ? ` (${step.note})` : ""}: expected ${short(step.expect)}, got ${short(actual)}`
        })
      }
    }

    for (let index = 0; index < scenario.steps.length; index++) {
      const step = scenario.steps[index]
      switch (step.do) {
        case "call": {
          time.set(step.now)
          const entered = yield* Deferred.make<string>()
          current = { index, app: step.app, entered }
          const peer = step.peer === undefined ? Peer.none : Peer.named(step.peer)
          const bytes = yield* guarded(index, Effect.sync(() => canonicalText(step.call)))
          if (Option.isNone(bytes)) break
          const fiber = yield* Effect.forkDaemon(withTime(executor.call(new Received(bytes.value), peer)))
          // In flight: the application holds it, or it was accepted and waits (a sys/undo behind a
          // running reversal of the same tally, section 8.1) past a generous quiet period.
          const callId = isJsonObject(step.call) ? identity(step.call) : ""
          const raced = yield* guarded(index, Effect.raceAll([
            Effect.map(Fiber.join(fiber), (answer) => ({ _tag: "answer" as const, answer })),
            Effect.map(Deferred.await(entered), (callId) => ({ _tag: "held" as const, callId })),
            Effect.as(Effect.sleep(Duration.seconds(WAIT_SECONDS)), { _tag: "held" as const, callId })
          ]))
          if (Option.isNone(raced)) break
          const first = raced.value
          if (first._tag === "held") {
            fibers.set(first.callId, fiber)
            compare(index, step, { inflight: true })
          } else compare(index, step, callAnswerJson(first.answer))
          break
        }
        case "revoke": {
          time.set(step.now)
          current = { index, app: undefined, entered: undefined }
          const answer = yield* guarded(
            index,
            Effect.suspend(() => withTime(executor.revoke(new Received(canonicalText(step.revoke)))))
          )
          if (Option.isSome(answer)) compare(index, step, revokeAnswerJson(answer.value))
          break
        }
        case "finish": {
          current = { index, app: undefined, entered: undefined }
          const held = holds.get(step.call)
          const fiber = fibers.get(step.call)
          if (held === undefined || fiber === undefined) {
            failures.push({ step: index, message: `finish: no held operation for call ${step.call}` })
            break
          }
          const signaled = yield* held.operation.stopRequested
          if (signaled !== step.signaled) {
            failures.push({
              step: index,
              message: `finish${step.note ? ` (${step.note})` : ""}: the operation was ${signaled ? "" : "not "}told to stop, expected ${step.signaled ? "" : "not "}told`
            })
          }
          holds.delete(step.call)
          fibers.delete(step.call)
          yield* Deferred.succeed(held.outcome, toOutcome(step.app))
          const answer = yield* guarded(index, Fiber.join(fiber))
          if (Option.isSome(answer)) compare(index, step, callAnswerJson(answer.value))
          break
        }
        case "restart": {
          current = { index, app: undefined, entered: undefined }
          // A crash: running operations are lost without reporting; nothing outside the store survives.
          for (const f of fibers.values()) yield* Fiber.interrupt(f)
          fibers.clear()
          holds.clear()
          yield* Scope.close(scope, Exit.void)
          scope = yield* Scope.make()
          const reopened = yield* Effect.either(start)
          if (Either.isLeft(reopened)) {
            failures.push({ step: index, message: `restart: store did not reopen: ${reopened.left.message}` })
            return { name: scenario.name, failures }
          }
          executor = reopened.right
          const resolved = yield* Effect.either(withTime(executor.recover))
          if (Either.isLeft(resolved)) failures.push({ step: index, message: `restart: recovery failed: ${resolved.left.message}` })
          else compare(index, step, { resolved: resolved.right })
          break
        }
      }
    }
    for (const f of fibers.values()) yield* Fiber.interrupt(f)
    yield* Scope.close(scope, Exit.void)
    return { name: scenario.name, failures }
  })

/** A scenario result as the lines the runner prints: one per failed step. */
export const failureLines = (file: string, result: ScenarioResult): ReadonlyArray<string> =>
  result.failures.map((f) => `FAIL ${file} [${result.name}] step ${f.step + 1}: ${f.message}`)

export type { JsonObject }
