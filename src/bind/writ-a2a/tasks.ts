// The tasks an A2A endpoint answered, in memory (a restart forgets them; the tallies themselves are
// in the executor's store and a resent call gets its stored one): what `GetTask` reads, what
// `ListTasks` pages through (A2A 1.0 section 3.1.4: newest change first, cursor pages), and what
// `SubscribeToTask` follows (section 3.1.6: the task as it is, then its changes until a terminal
// state). The latest `max` tasks are kept.
//
// Each change is timed by the Clock (what `statusTimestampAfter` compares; the task itself is kept
// as answered, so a resent call's task is the same JSON) and numbered: the number orders the list
// and is its cursor, a page token naming the last change seen, so a task that changes between two
// pages moves to the front instead of being listed twice.
import { Clock, Context, Effect, Layer, Queue, Ref, type Scope } from "effect"
import { isTerminal, type Task } from "./schema.js"

/** Who sent the message a task answers: the transport's peer (section 7.6), `""` for none. ListTasks
 * lists only the asking peer's tasks (A2A 1.0 section 13.1: tasks visible to the client). */
export type TaskOwner = string

export interface StoredTask {
  readonly task: Task
  readonly owner: TaskOwner
  /** The change's place in the endpoint's order of changes (1, 2, ...). */
  readonly seq: number
  /** The change's time, epoch milliseconds. */
  readonly at: number
}

/** What a `put` changed: the task as stored, and the state before (undefined: a new task). */
export interface PutResult {
  readonly stored: StoredTask
  readonly previous: Task | undefined
}

export interface A2aTasksService {
  /** Stores the task, its change timed by the Clock. The owner is kept from the first put. */
  readonly put: (task: Task, owner?: TaskOwner) => Effect.Effect<PutResult>
  readonly get: (id: string) => Effect.Effect<Task | undefined>
  /** Every task held, newest change first. */
  readonly all: Effect.Effect<ReadonlyArray<StoredTask>>
  /**
   * The task's changes from now on, each as stored, in order, ending with the first in a terminal
   * state; the subscription is released with the scope. Registered before the caller reads the
   * task, so no change between the read and the subscription is lost.
   */
  readonly changes: (id: string) => Effect.Effect<Queue.Dequeue<Task>, never, Scope.Scope>
}

interface TasksState {
  readonly seq: number
  readonly tasks: ReadonlyMap<string, StoredTask>
}

/** A subscriber's queue: a task changes state a handful of times, so 16 never drops in practice;
 * sliding, so one that stopped reading cannot hold memory. */
const SUBSCRIBER_QUEUE = 16

export class A2aTasks extends Context.Tag("mandate/A2aTasks")<A2aTasks, A2aTasksService>() {
  static memory = (max = 1024): Layer.Layer<A2aTasks> =>
    Layer.effect(A2aTasks, Effect.gen(function*() {
      const ref = yield* Ref.make<TasksState>({ seq: 0, tasks: new Map() })
      const subscribers = new Map<string, Set<Queue.Queue<Task>>>()
      const put = (task: Task, owner: TaskOwner = ""): Effect.Effect<PutResult> =>
        Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const stamped = task
          const result = yield* Ref.modify(ref, (s): [PutResult, TasksState] => {
            const before = s.tasks.get(task.id)
            const stored: StoredTask = { task: stamped, owner: before?.owner ?? owner, seq: s.seq + 1, at }
            const next = new Map(s.tasks)
            next.delete(task.id)
            next.set(task.id, stored)
            while (next.size > max) next.delete(next.keys().next().value!)
            return [{ stored, previous: before?.task }, { seq: s.seq + 1, tasks: next }]
          })
          const queues = subscribers.get(task.id)
          if (queues !== undefined) yield* Effect.forEach(queues, (q) => Queue.offer(q, stamped), { discard: true })
          return result
        })
      const changes = (id: string) =>
        Effect.acquireRelease(
          Effect.tap(Queue.sliding<Task>(SUBSCRIBER_QUEUE), (q) =>
            Effect.sync(() => {
              const set = subscribers.get(id) ?? new Set()
              set.add(q)
              subscribers.set(id, set)
            })),
          (q) =>
            Effect.zipRight(
              Effect.sync(() => {
                const set = subscribers.get(id)
                set?.delete(q)
                if (set?.size === 0) subscribers.delete(id)
              }),
              Queue.shutdown(q)
            )
        )
      return {
        put,
        get: (id) => Effect.map(Ref.get(ref), (s) => s.tasks.get(id)?.task),
        all: Effect.map(Ref.get(ref), (s) => [...s.tasks.values()].sort((a, b) => b.seq - a.seq)),
        changes
      }
    }))
}

export { isTerminal }
