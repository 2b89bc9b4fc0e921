// `--http URL` of `writ mcp-gate` and `writ mcp-proxy` (src/cli/mcp-upstream.ts): each misuse is a
// usage error naming its reason code, and a good URL gives a new transport per call.
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { httpUpstream } from "../../src/cli/mcp-upstream.js"

describe("--http URL", () => {
  it.effect("without --http there is no HTTP upstream (the command after -- is used)", () =>
    Effect.gen(function*() {
      expect(yield* httpUpstream(Option.none(), "node")).toBeUndefined()
    }))

  it.effect("--http and a command after -- together are refused as mandate/usage", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(httpUpstream(Option.some("http://127.0.0.1:9/mcp"), "node"))
      expect(e.reason).toBe("mandate/usage")
      expect(e.message).toContain("not both")
    }))

  it.effect("a string that is not a URL is refused as mandate/usage at --http", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(httpUpstream(Option.some("not a url"), undefined))
      expect([e.reason, e.path]).toEqual(["mandate/usage", "--http"])
    }))

  it.effect("a URL gives a new Streamable HTTP transport each time (a reconnect starts afresh)", () =>
    Effect.gen(function*() {
      const make = yield* httpUpstream(Option.some("http://127.0.0.1:9/mcp"), undefined)
      expect(make).toBeDefined()
      const a = make!()
      const b = make!()
      expect(a).toBeInstanceOf(StreamableHTTPClientTransport)
      expect(a).not.toBe(b)
    }))
})
