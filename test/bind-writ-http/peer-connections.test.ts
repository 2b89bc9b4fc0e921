// The per-peer connection accounting shared by every listener (src/bind/peer-connections.ts):
// one peer never reaches the listener's cap, a peer's count falls when its connections close
// (once each), and IPv4-mapped and same-/64 IPv6 addresses count as one peer.
import { describe, expect, it } from "@effect/vitest"
import { peerConnections, peerKey, perPeerCap } from "../../src/bind/peer-connections.js"

describe("peer connection accounting", () => {
  it("keeps every peer's cap below the listener's", () => {
    expect(perPeerCap(512)).toBe(128)
    expect(perPeerCap(256)).toBe(64)
    expect(perPeerCap(3)).toBe(1)
    expect(perPeerCap(16, 16)).toBe(15)
    expect(perPeerCap(16, 1000)).toBe(15)
    expect(perPeerCap(16, 0)).toBe(1)
    for (let max = 2; max <= 64; max++) for (const asked of [undefined, 1, max - 1, max, 2 * max]) expect(perPeerCap(max, asked)).toBeLessThan(max)
  })

  it("names a peer by its IPv4 address or its IPv6 /64", () => {
    expect(peerKey("::ffff:127.0.0.2")).toBe("127.0.0.2")
    expect(peerKey("10.0.0.1")).toBe("10.0.0.1")
    expect(peerKey("2001:db8:1:2::5")).toBe(peerKey("2001:db8:1:2:ffff:0:0:9"))
    expect(peerKey("2001:db8:1:2::5")).not.toBe(peerKey("2001:db8:1:3::5"))
    expect(peerKey("::1")).toBe("0:0:0:0::/64")
  })

  it("refuses a peer at its share and the listener at its cap; a release counts once", () => {
    const c = peerConnections(4, 2)
    const a1 = c.admit("127.0.0.2")
    const a2 = c.admit("::ffff:127.0.0.2")
    expect([a1._tag, a2._tag]).toEqual(["admitted", "admitted"])
    expect(c.admit("127.0.0.2")).toEqual({ _tag: "refused", reason: "peer", cap: 2 })
    expect(c.admit("127.0.0.3")._tag).toBe("admitted")
    expect(c.admit("127.0.0.4")._tag).toBe("admitted")
    expect(c.admit("127.0.0.5")).toEqual({ _tag: "refused", reason: "full", cap: 4 })
    if (a1._tag !== "admitted") throw new Error("admitted")
    a1.release()
    a1.release()
    expect(c.open()).toBe(3)
    expect(c.admit("127.0.0.2")._tag).toBe("admitted")
    expect(c.admit("127.0.0.2")._tag).toBe("refused")
  })
})
