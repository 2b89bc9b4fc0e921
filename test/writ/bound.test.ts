import { Effect, Either } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { checkArgs, checkBound, checkBounds, narrows, prefixMatches, satisfies } from "../../src/writ/bound.js"
import { keyOf } from "./fixtures.js"

const reason = (eff: Effect.Effect<unknown, { reason: string }>) => {
  const r = Effect.runSync(Effect.either(eff))
  return Either.isLeft(r) ? r.left.reason : "accept"
}

describe("section 3: one bound, first failure wins", () => {
  it.each([
    ["not an object", [1], "malformed"],
    ["null", null, "malformed"],
    ["extra member", { t: "max", v: 1, x: 1 }, "malformed"],
    ["missing v", { t: "max" }, "malformed"],
    ["t not a string, unknown value", { t: 5, v: "zz" }, "malformed"],
    ["unknown type before value type", { t: "glob", v: 1.5 }, "unknown_bound"],
    ["max value a string", { t: "max", v: "1" }, "malformed"],
    ["count negative", { t: "count", v: -1 }, "noncanonical"],
    ["total negative", { t: "total", v: -5 }, "noncanonical"],
    ["prefix not a string", { t: "prefix", v: 1 }, "malformed"],
    ["set not an array", { t: "set", v: "USD" }, "malformed"],
    ["set element an object", { t: "set", v: ["a", {}] }, "malformed"],
    ["set repeat before a later bad element", { t: "set", v: ["a", "a", {}] }, "noncanonical"],
    ["set bad element before a later repeat", { t: "set", v: ["a", true, "a"] }, "malformed"],
    ["set int and string differ", { t: "set", v: [1, "1"] }, "accept"],
    ["window three elements", { t: "window", v: [1, 2, 3] }, "malformed"],
    ["window strings", { t: "window", v: ["1", "2"] }, "malformed"],
    ["window inverted", { t: "window", v: [3, 2] }, "noncanonical"],
    ["window point", { t: "window", v: [2, 2] }, "accept"]
  ])("%s", (_n, bound, expected) => {
    expect(reason(checkBound(bound))).toBe(expected)
  })
})

describe("section 3.1: prefix matching", () => {
  it.each([
    ["travel", "travel", true],
    ["travel", "travel/charge", true],
    ["travel/", "travel/charge", true],
    ["travel/", "travel", false],
    ["travel/charge", "travel/chargeback", false],
    ["travel/charge", "travel/charge/retry", true],
    ["", "x", false],
    ["", "", true]
  ])("%j matches %j: %s", (p, s, m) => expect(prefixMatches(p, s)).toBe(m))
})

describe("narrows (section 14 order: child, parent, type, rule)", () => {
  it.each([
    [{ t: "max", v: 5 }, { t: "max", v: 5 }, "accept"],
    [{ t: "max", v: 6 }, { t: "max", v: 5 }, "not_narrowed"],
    [{ t: "count", v: 2 }, { t: "count", v: 1 }, "not_narrowed"],
    [{ t: "total", v: 1 }, { t: "total", v: 2 }, "accept"],
    [{ t: "max", v: 1 }, { t: "total", v: 2 }, "not_narrowed"],
    [{ t: "prefix", v: "travel/charge" }, { t: "prefix", v: "travel" }, "accept"],
    [{ t: "prefix", v: "travelx" }, { t: "prefix", v: "travel" }, "not_narrowed"],
    [{ t: "prefix", v: "travel" }, { t: "prefix", v: "travel/" }, "not_narrowed"],
    [{ t: "set", v: [] }, { t: "set", v: ["a"] }, "accept"],
    [{ t: "set", v: [1] }, { t: "set", v: ["1"] }, "not_narrowed"],
    [{ t: "window", v: [2, 3] }, { t: "window", v: [1, 4] }, "accept"],
    [{ t: "window", v: [0, 3] }, { t: "window", v: [1, 4] }, "not_narrowed"],
    [{ t: "window", v: [2, 5] }, { t: "window", v: [1, 4] }, "not_narrowed"],
    // the child is checked before the parent
    [{ t: "max", v: -1 }, { t: "nope", v: 1 }, "noncanonical"],
    [{ t: "max", v: 1 }, { t: "nope", v: 1 }, "unknown_bound"]
  ])("%j under %j: %s", (child, parent, expected) => expect(reason(narrows(child, parent))).toBe(expected))
})

describe("satisfies (section 3 on the bound, then the rule)", () => {
  it.each([
    [{ t: "max", v: 10 }, 10, "accept"],
    [{ t: "max", v: 10 }, 11, "out_of_bounds"],
    [{ t: "max", v: 10 }, -1, "out_of_bounds"],
    [{ t: "max", v: 10 }, "5", "out_of_bounds"],
    [{ t: "total", v: 10 }, 0, "accept"],
    [{ t: "prefix", v: "a/" }, "a/b", "accept"],
    [{ t: "prefix", v: "a" }, 1, "out_of_bounds"],
    [{ t: "set", v: [1] }, "1", "out_of_bounds"],
    [{ t: "set", v: ["USD"] }, "usd", "out_of_bounds"],
    [{ t: "set", v: ["USD"] }, ["USD"], "out_of_bounds"],
    [{ t: "window", v: [1, 3] }, 3, "accept"],
    [{ t: "window", v: [1, 3] }, 4, "out_of_bounds"],
    [{ t: "window", v: [3, 1] }, 2, "noncanonical"],
    [{ t: "count", v: 1 }, 0, "malformed"]
  ])("%j with %j: %s", (bound, arg, expected) => expect(reason(satisfies(bound, arg))).toBe(expected))
})

describe("bnd and the reserved names (section 6.1 step 5, section 3.2)", () => {
  const act = { t: "prefix", v: "x" }
  it.each([
    ["not an object", [], "malformed"],
    ["no act, even with a bad bound", { z: { t: "glob", v: 1 } }, "malformed"],
    ["bounds in canonical name order", { act, b: { t: "max", v: "x" }, a: { t: "glob", v: 1 } }, "unknown_bound"],
    ["section 3 before 3.2", { act: { t: "max", v: 1 }, z: { t: "glob", v: 1 } }, "unknown_bound"],
    ["act not a prefix", { act: { t: "max", v: 1 } }, "malformed"],
    ["hld not a set", { act, hld: { t: "prefix", v: "x" } }, "malformed"],
    ["hld element an integer", { act, hld: { t: "set", v: [1] } }, "malformed"],
    ["hld element not a key", { act, hld: { t: "set", v: ["did:web:x"] } }, "bad_key"],
    ["hld keys in array order", { act, hld: { t: "set", v: ["did:web:x", 1] } }, "bad_key"],
    ["hld of valid keys", { act, hld: { t: "set", v: [keyOf(1)] } }, "accept"],
    ["empty hld", { act, hld: { t: "set", v: [] } }, "accept"],
    ["depth not a max", { act, depth: { t: "count", v: 1 } }, "malformed"]
  ])("%s", (_n, bnd, expected) => expect(reason(checkBounds(bnd))).toBe(expected))
})

describe("section 7.2: arguments", () => {
  const bnd = Effect.runSync(
    checkBounds({
      act: { t: "prefix", v: "x" },
      a: { t: "max", v: 5 },
      b: { t: "set", v: ["y"] },
      n: { t: "count", v: 1 },
      depth: { t: "max", v: 3 }
    })
  )
  it("reports a missing argument before an out-of-range one, and ignores count and reserved names", () => {
    expect(reason(checkArgs(bnd, { a: 6 }))).toBe("missing_arg")
    expect(reason(checkArgs(bnd, { a: 6, b: "y" }))).toBe("out_of_bounds")
    expect(reason(checkArgs(bnd, { a: 5, b: "y", extra: 1 }))).toBe("accept")
  })
})
