/**
 * The typed fields of reply renderings (SPEC §9.2): times, durations, quantities, `uses` and
 * `undo`, each with its fixed rendering when malformed. All total; none throws.
 */
import { compareKeys } from "../../kernel/canonical.js"
import { formatQuantity, isQuantity, isUses } from "../measure.js"
import { has, isObject, leanScalar } from "./value.js"

/** Latest renderable time: 9999-12-31T23:59:59Z. */
export const MAX_TIME = 253402300799

const two = (n: number): string => (n < 10 ? "0" : "") + n

/** Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm). */
const civil = (days: number): readonly [number, number, number] => {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d]
}

/**
 * A time (`expires`, `at`, `until`): UTC `YYYY-MM-DDTHH:MMZ`, with `:SS` when seconds ≠ 0. Anything
 * but an integer in [0, 253402300799] renders as its lean scalar (`-` when missing or null).
 */
export const lensTime = (v: unknown, scalar: (v: unknown) => string = leanScalar): string => {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > MAX_TIME) return scalar(v)
  const days = Math.floor(v / 86400)
  const secs = v - days * 86400
  const [y, mo, d] = civil(days)
  const h = Math.floor(secs / 3600)
  const mi = Math.floor((secs % 3600) / 60)
  const s = secs % 60
  return `${String(y).padStart(4, "0")}-${two(mo)}-${two(d)}T${two(h)}:${two(mi)}${s === 0 ? "" : ":" + two(s)}Z`
}

/**
 * A duration: in the largest of d/h/m/s that divides it exactly (so 0 is `0d`). Anything but an
 * integer in [−2^53+1, 2^53−1] renders as its lean scalar.
 */
export const lensDuration = (v: unknown, scalar: (v: unknown) => string = leanScalar): string => {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) return scalar(v)
  if (v % 86400 === 0) return `${v / 86400}d`
  if (v % 3600 === 0) return `${v / 3600}h`
  if (v % 60 === 0) return `${v / 60}m`
  return `${v}s`
}

/** Lens of a quantity (§9.2, rendered by the measure module), or undefined when it is malformed (§5.1). */
export const lensQuantity = (q: unknown): string | undefined => (isQuantity(q) ? formatQuantity(q) : undefined)

/**
 * True when `uses` is well-formed (§5.1): an object whose every name is a measure name and every
 * value a quantity. The same predicate the grant checks use, so Lens shows `?` exactly for the
 * `uses` that clients must treat as invalid and limits as a hard failure.
 */
export const isWellFormedUses = (uses: unknown): boolean => isUses(uses)

const byCodePoint = compareKeys("codepoint")

/**
 * The `uses` attribute value: `emails 1, spend 22.90 USD` in canonical key order (§10), `?` as a
 * whole when malformed (names are not shown then), undefined when absent or empty (the attribute
 * is omitted). `null` is present and not an object, hence malformed.
 */
export const lensUses = (uses: unknown): string | undefined => {
  if (uses === undefined) return undefined
  if (!isUses(uses)) return "?"
  const names = Object.keys(uses).sort(byCodePoint)
  if (names.length === 0) return undefined
  return names.map((n) => `${n} ${formatQuantity(uses[n])}`).join(", ")
}

/** A proposal's `undo`: the window as a duration, or `never` unless it is an object with a `window`. */
export const lensProposalUndo = (undo: unknown, scalar: (v: unknown) => string = leanScalar): string =>
  isObject(undo) && has(undo, "window") ? lensDuration(undo.window, scalar) : "never"

/** A receipt's `undo`: `undo until {time}`, or `irreversible` unless it is an object with an `until`. */
export const lensReceiptUndo = (undo: unknown, scalar: (v: unknown) => string = leanScalar): string =>
  isObject(undo) && has(undo, "until") ? `undo until ${lensTime(undo.until, scalar)}` : "irreversible"
