// Which saved grants `mandate yea do` sends to a service (§6.3: `{"svc": [...]}` holds when the
// service's id is listed, every caveat in every block must hold), and the closest-capability hint.
import { describe, expect, it } from "vitest"
import { closestCapability, grantMayNameService } from "../../src/cli/yea-do.js"
import { AGENT, PRINCIPAL, rawBlock, rawRoot, rawToken, rootPayload, subagentKey } from "../yea/_helpers.js"
import { blockId } from "../../src/yea/grant.js"

describe("grantMayNameService", () => {
  it("keeps a grant with no svc caveat or one listing the service, leaves out one whose svc lists others", () => {
    expect(grantMayNameService(rawRoot([{ verbs: ["ASK"] }]), "shop.example")).toBe(true)
    expect(grantMayNameService(rawRoot([{ svc: ["calendar.example", "shop.example"] }]), "shop.example")).toBe(true)
    expect(grantMayNameService(rawRoot([{ svc: ["calendar.example"] }]), "shop.example")).toBe(false)
    expect(grantMayNameService(rawRoot([{ svc: ["shop.example"] }, { svc: ["calendar.example"] }]), "shop.example")).toBe(false)
  })

  it("a delegation's svc narrows the grant too", () => {
    const root = rawBlock(rootPayload([{ svc: ["shop.example", "calendar.example"] }]), PRINCIPAL)
    const narrowed = rawBlock({ caveats: [{ svc: ["calendar.example"] }], iat: 1, prev: blockId(root.s), sub: subagentKey }, AGENT)
    expect(grantMayNameService(rawToken([root, narrowed]), "calendar.example")).toBe(true)
    expect(grantMayNameService(rawToken([root, narrowed]), "shop.example")).toBe(false)
  })

  it("sends a grant it cannot read or whose svc is malformed, so the service names the fault", () => {
    expect(grantMayNameService("pg1.not-a-grant", "shop.example")).toBe(true)
    expect(grantMayNameService(rawRoot([{ svc: "calendar.example" }]), "shop.example")).toBe(true)
    expect(grantMayNameService(rawRoot([{ svc: [1] }]), "shop.example")).toBe(true)
  })
})

describe("closestCapability", () => {
  it("is the capability at the smallest edit distance, the first of equals; none when there are none", () => {
    expect(closestCapability("shop.serch", ["shop.order", "shop.search", "shop.status"])).toBe("shop.search")
    expect(closestCapability("shop.ordr", ["shop.search", "shop.order"])).toBe("shop.order")
    expect(closestCapability("x", ["ab", "ac"])).toBe("ab")
    expect(closestCapability("shop.search", [])).toBeUndefined()
  })
})
