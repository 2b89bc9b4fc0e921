// Request/response correlation for a client that multiplexes requests over one connection and
// routes each answer back by its id (YEA byte streams, SPEC §2.2; JSON-RPC as MCP frames it):
// a pending map keyed by id, one Deferred per request, every pending request failed when the
// connection closes, and every later request failed at once with the same error. The client owns
// the wire (what an id is, how frames are read); this module owns only the bookkeeping, so that
// a request's entry is removed however its wait ends (answer, close, timeout, interruption).
import { Deferred, Effect, Option } from "effect"

export interface Correlator<K, A, E, M = void> {
  /**
   * Registers `id` (with `meta`, what the reader needs to route non-final frames), runs `send`
   * and waits for the answer. Fails with the closing error if the correlator is closed, before
   * `send` runs. Bound it with `Effect.timeoutFail`: the entry is removed on interruption too.
   */
  readonly call: <E2, R>(id: K, meta: M, send: Effect.Effect<void, E2, R>) => Effect.Effect<A, E | E2, R>
  /** Answers `id`; false when no request waits for it (a stray or late answer, to be dropped). */
  readonly complete: (id: K, answer: A) => Effect.Effect<boolean>
  /** The meta of a pending request. */
  readonly pending: (id: K) => Effect.Effect<Option.Option<M>>
  /** Every pending request, in the order they were registered. */
  readonly entries: Effect.Effect<ReadonlyArray<readonly [K, M]>>
  /** Fails every pending request with `error`, and every later `call`; the first error is kept. */
  readonly close: (error: E) => Effect.Effect<void>
}

interface Entry<A, E, M> {
  readonly done: Deferred.Deferred<A, E>
  readonly meta: M
}

export const make = <K, A, E, M = void>(): Correlator<K, A, E, M> => {
  const waiting = new Map<K, Entry<A, E, M>>()
  let closed: Option.Option<E> = Option.none()
  return {
    call: (id, meta, send) =>
      Effect.suspend(() => {
        if (Option.isSome(closed)) return Effect.fail(closed.value)
        return Effect.flatMap(Deferred.make<A, E>(), (done) => {
          waiting.set(id, { done, meta })
          return Effect.zipRight(send, Deferred.await(done)).pipe(
            Effect.ensuring(Effect.sync(() => {
              if (waiting.get(id)?.done === done) waiting.delete(id)
            }))
          )
        })
      }),
    complete: (id, answer) =>
      Effect.suspend(() => {
        const entry = waiting.get(id)
        if (entry === undefined) return Effect.succeed(false)
        waiting.delete(id)
        return Deferred.succeed(entry.done, answer)
      }),
    pending: (id) => Effect.sync(() => Option.map(Option.fromNullable(waiting.get(id)), (e) => e.meta)),
    entries: Effect.sync(() => [...waiting].map(([k, e]) => [k, e.meta] as const)),
    close: (error) =>
      Effect.suspend(() => {
        const first = Option.getOrElse(closed, () => error)
        closed = Option.some(first)
        const all = [...waiting.values()]
        waiting.clear()
        return Effect.forEach(all, (e) => Deferred.fail(e.done, first), { discard: true })
      })
  }
}
