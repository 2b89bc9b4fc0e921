// Fixtures for the service runtime tests: the example services on in-memory stores, clients for the
// agent (and for another agent), at a fixed time.
import { Effect, Layer, TestClock } from "effect"
import { RandomBytes, Signer } from "../../src/kernel/services.js"
import * as MemoryYea from "../../src/store/memory/yea.js"
import { makeClient, type ClientOptions } from "../../src/yea/client.js"
import { calendarService, shopService } from "../../src/examples/index.js"
import { connectInProcess } from "../../src/yea/inproc.js"
import { makeService, type YeaServiceRuntime } from "../../src/yea/service/runtime.js"
import { AGENT, NOW, principalKey } from "../yea/_helpers.js"

export const atNow = TestClock.setTime(NOW * 1000)

export const shop = Effect.flatMap(shopService([principalKey]), (s) => makeService(s))
export const calendar = Effect.flatMap(calendarService([principalKey]), (s) => makeService(s))

/** A client of `runtime` for the key `seed` (the agent by default). */
export const clientOf = (runtime: YeaServiceRuntime, options: ClientOptions = {}, seed: Uint8Array = AGENT) =>
  Effect.provide(makeClient(connectInProcess(runtime), options), Layer.merge(Signer.fromSeed(seed), RandomBytes.seeded(seed)))

export const stores = Layer.merge(MemoryYea.layer, RandomBytes.seeded(new Uint8Array([9])))
