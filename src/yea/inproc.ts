// An in-process connection to a service runtime: frames go through JSON both ways, exactly as they
// would on a wire, without a socket. Used by tests and by the demo's first leg.
import { Effect } from "effect"
import type { YeaConnection } from "./client.js"
import type { YeaServiceRuntime } from "./service/runtime.js"

const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v))

export const connectInProcess = (service: YeaServiceRuntime): YeaConnection => ({
  request: (frame, onEvent) => Effect.map(service.handle(wire(frame), (e) => onEvent(wire(e))), wire),
  close: Effect.void
})
