/**
 * Refusals without a stack trace.
 *
 * A refusal (a Writ reason code of section 11, a YEA reason code, a limit that does not fit) is an
 * answer to a request, not a bug: nobody reads where in the verifier it was built. But every tagged
 * error class of Effect is an `Error`, whose constructor captures the stack, and on the hot paths
 * that capture is most of what a refusal costs (about 9 of 13 us per WritError, measured with
 * `npm run bench -- refusal`). `Stackless(Class)` returns a subclass whose constructor sets
 * `Error.stackTraceLimit` to 0 around the base constructor, so no frame is captured. Nothing else
 * changes: `_tag`, fields, the class's Schema (its `ast`, encode and decode, which build instances
 * through `new this`), `instanceof`, structural equality (own enumerable fields only: `stack` is
 * not one) and `catchTags`. `stack` still reads `Name: message`, with no frames.
 *
 * Use it as `class WritError extends Stackless(Schema.TaggedError<WritError>()("WritError", {...})) {}`.
 * Keep the stack on errors that report a fault (a store or a file that failed), where the frames
 * help whoever debugs it.
 */
export const Stackless = <C extends new (...args: Array<any>) => object>(Base: C): C => {
  // A mixin's constructor must take `...args: any[]` (TypeScript's rule for mixin classes).
  class StacklessError extends (Base as unknown as new (...args: Array<any>) => object) {
    constructor(...args: Array<any>) {
      const limit = Error.stackTraceLimit
      Error.stackTraceLimit = 0
      try {
        super(...args)
      } finally {
        Error.stackTraceLimit = limit
      }
    }
  }
  return StacklessError as unknown as C
}
