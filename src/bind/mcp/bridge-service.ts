// What the bridge learns of a service at start (SPEC-bridge "Tools", "Start-up limits"): `HELLO`
// with a budget of 100,000, then every `more` handle on the capability list `EXPAND`ed (at most 64
// EXPANDs), so a service whose BRIEF had to elide capabilities still gets all its tools. A
// capability entry that doesn't parse, or repeats a name, is skipped and reported; a service that
// needs more than 64 EXPANDs is refused (reported as unreachable by the caller).
import { Data, Effect, Schema } from "effect"
import type { YeaClientShape } from "../../yea/client.js"
import { Capability } from "../../yea/frame.js"
import type { BridgeService } from "./bridge.js"

export const HELLO_BUDGET = 100_000
export const MAX_EXPANDS = 64

/** A service the bridge can't serve: no BRIEF, or a capability list past the EXPAND limit. */
export class BridgeServiceRefused extends Data.TaggedError("BridgeServiceRefused")<{
  readonly reason: "bad_service" | "too_many_expands"
  readonly message: string
}> {}

const decodeCapability = Schema.decodeUnknownEither(Capability)

/** The service as the bridge serves it, and what of its capability list was skipped (with why). */
export const describeService = Effect.fn("yea.mcp.bridge.describe")(function* (client: YeaClientShape) {
  const brief = yield* client.hello({ budget: HELLO_BUDGET })
  if (brief.kind !== "BRIEF") return yield* Effect.fail(new BridgeServiceRefused({ reason: "bad_service", message: `HELLO was answered ${brief.kind}, not BRIEF` }))
  const raw: Array<unknown> = [...brief.capabilities]
  // Only handles on the capability list itself matter here; others (a long summary) stay elided.
  let handles = (brief.more ?? []).filter((m) => m.path === "capabilities" || m.path.startsWith("capabilities")).map((m) => m.handle)
  let expands = 0
  while (handles.length > 0) {
    const handle = handles.shift()!
    if (++expands > MAX_EXPANDS) return yield* Effect.fail(new BridgeServiceRefused({ reason: "too_many_expands", message: `its capability list needs more than ${MAX_EXPANDS} EXPANDs` }))
    const slice = yield* client.expand(handle, { budget: HELLO_BUDGET })
    if (slice.kind !== "ANSWER") return yield* Effect.fail(new BridgeServiceRefused({ reason: "bad_service", message: `EXPAND of its capabilities was answered ${slice.kind}` }))
    const items = (slice.data as { items?: unknown } | null)?.items
    if (Array.isArray(items)) raw.push(...items)
    handles = [...handles, ...(slice.more ?? []).filter((m) => m.path === "data.items").map((m) => m.handle)]
  }
  const skipped: Array<string> = []
  const seen = new Set<string>()
  const capabilities: Array<BridgeService["capabilities"][number]> = []
  for (const c of raw) {
    const d = decodeCapability(c)
    if (d._tag === "Left") {
      skipped.push(`${brief.service.id}: a capability entry that doesn't parse`)
      continue
    }
    if (seen.has(d.right.name)) {
      skipped.push(`${brief.service.id}/${d.right.name}: the name is repeated`)
      continue
    }
    seen.add(d.right.name)
    capabilities.push(d.right)
  }
  const service: BridgeService = { client, id: brief.service.id, name: brief.service.name, capabilities }
  return { service, skipped, summary: brief.service.summary }
})
