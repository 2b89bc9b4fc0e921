// What the store tests share: the check that a failure is the typed StoreError, not a defect.
import { expect } from "@effect/vitest"
import { Cause, Exit, Option } from "effect"
import { StoreError } from "../../src/accounting/store-error.js"

/** The exit is a failure whose error is a StoreError (not a defect, not an interruption); returns it. */
export const expectStoreError = (exit: Exit.Exit<unknown, unknown>, operation?: RegExp): StoreError => {
  if (Exit.isSuccess(exit)) throw new Error("expected a StoreError, got a success")
  expect(Cause.isDie(exit.cause), Cause.pretty(exit.cause)).toBe(false)
  const failure = Cause.failureOption(exit.cause)
  expect(Option.isSome(failure), Cause.pretty(exit.cause)).toBe(true)
  const e = Option.getOrThrow(failure)
  expect(e).toBeInstanceOf(StoreError)
  if (operation !== undefined) expect((e as StoreError).operation).toMatch(operation)
  return e as StoreError
}
