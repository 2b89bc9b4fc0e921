/**
 * Time as the protocols read it: whole seconds since the Unix epoch (Writ v0.1 section 1's
 * `iat`/`exp`, YEA's `iat`/`ts`), from Effect's `Clock`, so tests move it with `TestClock`.
 */
import { Clock, Effect } from "effect"

/** The current time in whole Unix seconds (rounded down). */
export const unixSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
