// The public verification entry points are spans a tracer sees, with the call's
// and the leaf writ's identities as attributes, and verifyCall's log lines annotated with them.
import { NodeSdk } from "@effect/opentelemetry"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { verifyCall } from "../../src/writ/call.js"
import { verifyChain } from "../../src/writ/chain.js"
import { world } from "./fixtures.js"

describe("spans on the Writ entry points", () => {
  it.live("verifyCall and verifyChain are spans, with the call and leaf as attributes", () => {
    const w = world()
    const exporter = new InMemorySpanExporter()
    return Effect.gen(function* () {
      yield* verifyCall(w.call.call.json)
      const spans = exporter.getFinishedSpans()
      const call = spans.find((s) => s.name === "writ.verifyCall")
      expect(call?.attributes["writ.call"]).toBe(w.call.call.id)
      expect(call?.attributes["writ.leaf"]).toBe(w.child.id)
      yield* verifyChain(w.child.chain)
      const chain = exporter.getFinishedSpans().find((s) => s.name === "writ.verifyChain")
      expect(chain?.attributes["writ.leaf"]).toBe(w.child.id)
      expect(chain?.attributes["writ.chain_length"]).toBe(w.child.chain.length)
    }).pipe(Effect.provide(NodeSdk.layer(() => ({ resource: { serviceName: "test" }, spanProcessor: new SimpleSpanProcessor(exporter) }))))
  })
})
