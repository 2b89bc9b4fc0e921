// Budget fitting (SPEC §8), More entries and EXPAND slices.
import { Effect } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { RandomBytes } from "../../src/kernel/services.js"
import { type Elided, STRING_KEEP, fitReply, fitReplyEffect } from "../../src/yea/lens/budget.js"
import { est } from "../../src/yea/lens/estimate.js"
import { expandSlice, expandSliceEffect } from "../../src/yea/lens/expand.js"
import { lensReply } from "../../src/yea/lens/reply.js"
import { lensValue } from "../../src/yea/lens/value.js"

const ids = () => {
  let n = 0
  return () => `h_${n++}`
}
const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, title: `Event number ${i}`, at: 1790000000 + i }))
const cost = (r: unknown) => est(lensReply(r))

describe("fitting", () => {
  it("leaves a reply that fits untouched: no more, no handles", () => {
    const reply = { kind: "ANSWER", data: { events: rows(3) } }
    const f = fitReply(reply, 2000, ids())
    expect(f.reply).toEqual(reply)
    expect(f.elided).toEqual([])
  })
  it("halves an array, keeping its first items, until the reply fits; one More entry per value", () => {
    const reply = { kind: "ANSWER", data: { events: rows(40) } }
    const f = fitReply(reply, 150, ids())
    const kept = (f.reply.data as any).events
    expect(cost(f.reply)).toBeLessThanOrEqual(150)
    // 40 -> 20 -> 10 -> 5 ...: some power-of-two fraction, a prefix of the original
    expect([20, 10, 5, 2, 1, 0]).toContain(kept.length)
    expect(kept).toEqual(rows(40).slice(0, kept.length))
    expect(f.reply.more).toEqual([
      { handle: "h_0", path: "data.events", remaining: 40 - kept.length, est: est(lensValue({ items: rows(40).slice(kept.length) })) }
    ])
    expect(f.elided).toEqual([{ handle: "h_0", path: "data.events", kind: "items", items: rows(40).slice(kept.length), whole: false }])
    // It stopped as soon as it fit: the previous halving step was over budget.
    const once = fitReply(reply, cost({ ...f.reply, data: { events: rows(40).slice(0, kept.length * 2) } }) - 1, ids())
    expect((once.reply.data as any).events.length).toBeLessThanOrEqual(kept.length)
  })
  it("keeps floor(n/2) items: a single item is elided entirely", () => {
    const f = fitReply({ kind: "ANSWER", data: ["x".repeat(50)] }, 1, ids())
    expect(f.reply.data).toEqual([])
    expect(f.reply.more).toEqual([{ handle: "h_0", path: "data", remaining: 1, est: est(lensValue({ items: ["x".repeat(50)] })) }])
  })
  it("elides the largest candidate first", () => {
    const reply = { kind: "ANSWER", data: { small: [1, 2, 3, 4], big: rows(30) } }
    const budget = cost(reply) - 5
    const f = fitReply(reply, budget, ids())
    expect((f.reply.data as any).small).toEqual([1, 2, 3, 4])
    expect((f.reply.data as any).big).toEqual(rows(15))
    expect((f.reply.more as any)[0].path).toBe("data.big")
  })
  it("on a tie in size, the first candidate in document order goes first", () => {
    const a = Array.from({ length: 40 }, (_, i) => 100 + i)
    const b = Array.from({ length: 40 }, (_, i) => 200 + i)
    const reply = { kind: "ANSWER", data: { a, b } }
    const expected = {
      kind: "ANSWER",
      data: { a: a.slice(0, 20), b },
      more: [{ handle: "h_0", path: "data.a", remaining: 20, est: est(lensValue({ items: a.slice(20) })) }]
    }
    // halving b instead would cost exactly the same: only the order decides
    expect(cost(expected)).toBeLessThan(cost(reply))
    expect(fitReply(reply, cost(expected), ids()).reply).toEqual(expected)
  })
  it("cuts a long string to max(200, floor(len/2)) code points plus …", () => {
    const s = "x,".repeat(500) // 1000 code points, 1000 tokens
    const budget = cost({ kind: "ANSWER", data: { t: s.slice(0, 500) + "…" } }) + 40 // + its More line
    const f = fitReply({ kind: "ANSWER", data: { t: s } }, budget, ids())
    expect((f.reply.data as any).t).toBe(s.slice(0, 500) + "…")
    expect(f.reply.more).toEqual([{ handle: "h_0", path: "data.t", remaining: 500, est: est(lensValue({ text: s.slice(500) })) }])
    const tiny = fitReply({ kind: "ANSWER", data: { t: s } }, 1, ids())
    expect((tiny.reply.data as any).t).toBe(s.slice(0, STRING_KEEP) + "…")
    expect((tiny.reply.more as any)[0].remaining).toBe(800)
    expect(tiny.elided).toEqual([{ handle: "h_0", path: "data.t", kind: "text", text: s.slice(200) }])
  })
  it("counts string length in code points and never splits a surrogate pair", () => {
    const s = "😀".repeat(300)
    const f = fitReply({ kind: "ANSWER", data: s }, 1, ids())
    expect(f.reply.data).toBe("😀".repeat(200) + "…")
    expect((f.reply.more as any)[0].remaining).toBe(100)
  })
  it("never cuts a string of 200 code points or fewer", () => {
    const s = "word ".repeat(40) // 200
    const f = fitReply({ kind: "ANSWER", data: { t: s } }, 1, ids())
    expect(f.reply).toEqual({ kind: "ANSWER", data: { t: s } })
  })
  it("halving a value again keeps its handle and updates its entry", () => {
    const f = fitReply({ kind: "ANSWER", data: { events: rows(64) } }, 40, ids())
    expect((f.reply.more as any).length).toBe(1)
    expect((f.reply.more as any)[0].handle).toBe("h_0")
    expect((f.reply.more as any)[0].remaining).toBe(64 - (f.reply.data as any).events.length)
  })
  it("an outer array is always larger than anything inside it, so it is halved first", () => {
    const data = { rows: [{ tags: Array.from({ length: 50 }, (_, i) => `tag${i}`) }, { tags: ["a"] }] }
    const f = fitReply({ kind: "ANSWER", data }, 1, ids())
    expect(f.reply.data).toEqual({ rows: [] })
    expect(f.reply.more).toEqual([{ handle: "h_0", path: "data.rows", remaining: 2, est: est(lensValue({ items: data.rows })) }])
    expect((f.elided[0] as any).items).toEqual(data.rows)
  })
  it("leaves a malformed more alone when nothing is elided", () => {
    const reply = { kind: "ANSWER", data: 1, more: "x" }
    expect(fitReply(reply, 100, ids()).reply).toEqual(reply)
  })
  it("keeps the reply's own more entries and never mutates its input", () => {
    const reply = { kind: "ANSWER", data: { events: rows(40) }, more: [{ handle: "h_x", path: "data.z", remaining: 1, est: 1 }] }
    const copy = structuredClone(reply)
    const f = fitReply(reply, 100, ids())
    expect(reply).toEqual(copy)
    expect((f.reply.more as any)[0]).toEqual({ handle: "h_x", path: "data.z", remaining: 1, est: 1 })
    expect((f.reply.more as any)[1].handle).toBe("h_0")
  })
})

const proposal = (i: number, data?: unknown) => ({
  id: `p_${i}`,
  capability: "shop.order",
  summary: `Order ${i} — a fairly long summary that costs tokens`,
  effects: [{ op: "create", target: `order/${i}`, detail: "x ".repeat(30) }],
  uses: { spend: { amount: 1000 + i, scale: 2, unit: "USD" } },
  risk: "low",
  undo: { window: 3600 },
  expires: 1790000600,
  hash: `hash${i}`,
  ...(data === undefined ? {} : { data })
})

describe("deep roots before list roots", () => {
  it("empties proposals' data before dropping any proposal, and never touches anything else", () => {
    const ps = [proposal(1, { lines: rows(20) }), proposal(2, { lines: rows(20), note: "n,".repeat(300) })]
    const reply = { kind: "PROPOSALS", proposals: ps }
    const bare = { kind: "PROPOSALS", proposals: [proposal(1, { lines: [] }), proposal(2, { lines: [], note: "n,".repeat(100) + "…" })] }
    // room for the fully elided proposals and their More lines, not for one more data item
    const budget = cost(bare) + 3 * 25
    const f = fitReply(reply, budget, ids())
    const out = f.reply.proposals as Array<any>
    expect(out.length).toBe(2)
    out.forEach((p, i) => {
      const { data: _d, ...rest } = p
      const { data: _o, ...orig } = ps[i]
      expect(rest).toEqual(orig)
    })
    expect(cost(f.reply)).toBeLessThanOrEqual(budget)
    expect((f.reply.more as Array<any>).every((m) => m.path.startsWith("proposals.") && m.path.includes(".data."))).toBe(true)
  })
  it("drops whole trailing proposals only when no deep candidate remains; the remainder is the originals", () => {
    const ps = [1, 2, 3, 4, 5, 6].map((i) => proposal(i, { lines: rows(3) }))
    const f = fitReply({ kind: "PROPOSALS", proposals: ps }, 120, ids())
    const out = f.reply.proposals as Array<any>
    expect(out.length).toBeLessThan(6)
    out.forEach((p, i) => expect({ ...p, data: undefined }).toEqual({ ...ps[i], data: undefined }))
    const listMore = (f.reply.more as Array<any>).find((m) => m.path === "proposals")
    expect(listMore.remaining).toBe(6 - out.length)
    const el = f.elided.find((e) => e.path === "proposals") as Extract<Elided, { kind: "items" }>
    expect(el.items).toEqual(ps.slice(out.length))
    // handles were issued for the data of proposals that were later dropped, and none survives
    let issued = 0
    const g = fitReply({ kind: "PROPOSALS", proposals: ps }, 120, () => `h_${issued++}`)
    expect(g).toEqual(fitReply({ kind: "PROPOSALS", proposals: ps }, 120, ids()))
    expect(issued).toBeGreaterThan((g.reply.more as Array<unknown>).length)
    expect(g.elided.length).toBe((g.reply.more as Array<unknown>).length)
    for (const m of f.reply.more as Array<any>) {
      const idx = /^proposals\.(\d+)\./.exec(m.path)
      if (idx) expect(Number(idx[1])).toBeLessThan(out.length)
    }
  })
  it("drops trailing capabilities whole, never their params", () => {
    const caps = Array.from({ length: 12 }, (_, i) => ({ name: `svc.op${i}`, kind: "ask", summary: "Does a thing", params: { q: "string", n: "int" } }))
    const reply = { kind: "BRIEF", service: { id: "s", name: "S" }, capabilities: caps }
    const f = fitReply(reply, 60, ids())
    const out = f.reply.capabilities as Array<any>
    expect(out).toEqual(caps.slice(0, out.length))
    expect(out.length).toBeLessThan(12)
    expect((f.reply.more as Array<any>)[0]).toMatchObject({ path: "capabilities", remaining: 12 - out.length })
  })
  it("elides inside RECEIPT.receipt.result but never its effects", () => {
    const receipt = { id: "r", summary: "Done", effects: Array.from({ length: 30 }, (_, i) => ({ op: "create", target: `x/${i}` })), undo: null, result: { rows: rows(30) } }
    const f = fitReply({ kind: "RECEIPT", auto: true, receipt }, 200, ids())
    expect((f.reply.receipt as any).effects).toEqual(receipt.effects)
    expect(((f.reply.receipt as any).result.rows as Array<unknown>).length).toBeLessThan(30)
    expect((f.reply.more as Array<any>)[0].path).toBe("receipt.result.rows")
  })
  it("elides nothing in kinds without roots, even over budget", () => {
    const reply = { kind: "ERROR", code: "x", message: "m ".repeat(300), need: [rows(10)] }
    expect(fitReply(reply, 5, ids()).reply).toEqual(reply)
    const unknown = { kind: "STATUS", data: rows(10) }
    expect(fitReply(unknown, 5, ids()).reply).toEqual(unknown)
  })
})

describe("EXPAND", () => {
  it("an items slice is an ANSWER {data: {items}}, itself fitted with further handles", () => {
    const f = fitReply({ kind: "ANSWER", data: { events: rows(50) } }, 100, ids())
    const slice = expandSlice(f.elided[0], 150, () => "h_next")
    expect(slice.reply.kind).toBe("ANSWER")
    expect(cost(slice.reply)).toBeLessThanOrEqual(150)
    expect((slice.reply.more as Array<any>)[0]).toMatchObject({ handle: "h_next", path: "data.items" })
  })
  it("a slice of proposals drops whole proposals and never elides inside one", () => {
    const ps = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => proposal(i, { lines: rows(3) }))
    const f = fitReply({ kind: "PROPOSALS", proposals: ps }, 150, ids())
    const el = f.elided.find((e) => e.path === "proposals")!
    expect(el).toMatchObject({ kind: "items", whole: true })
    const slice = expandSlice(el, 200, () => "h_next")
    const items = (slice.reply.data as any).items as Array<unknown>
    expect(items.length).toBeGreaterThan(0)
    expect(items).toEqual((el as any).items.slice(0, items.length))
    expect(slice.reply.more).toEqual([expect.objectContaining({ handle: "h_next", path: "data.items" })])
    expect((slice.elided[0] as any).whole).toBe(true)
  })
  it("a text slice is {data: {text}}", () => {
    const s = "x,".repeat(500)
    const f = fitReply({ kind: "ANSWER", data: s }, 20, ids())
    const slice = expandSlice(f.elided[0], 5000, ids())
    expect(slice.reply).toEqual({ kind: "ANSWER", data: { text: s.slice(200) } })
  })
  it("following the handles reconstructs the original value exactly", () => {
    const all = rows(75)
    let f = fitReply({ kind: "ANSWER", data: all }, 120, ids())
    const seen: Array<unknown> = [...(f.reply.data as Array<unknown>)]
    let next = f.elided[0]
    const n = ids()
    let guard = 0
    while (next !== undefined && guard++ < 100) {
      f = expandSlice(next, 120, n)
      seen.push(...((f.reply.data as any).items as Array<unknown>))
      next = f.elided.find((e) => e.path === "data.items") as Elided
    }
    expect(seen).toEqual(all)
  })
})

describe("handles from the RandomBytes service", () => {
  const seeded = RandomBytes.seeded(new Uint8Array(32).fill(7))
  it.effect("are h_ and 12 base64url characters, deterministic for a seed", () =>
    Effect.gen(function* () {
      // Each run provides the seeded Layer afresh, so both start from the same seed.
      const run = Effect.provide(fitReplyEffect({ kind: "ANSWER", data: { a: rows(40), b: "z".repeat(900) } }, 60), seeded)
      const [a, b] = [yield* run, yield* run]
      expect(a).toEqual(b)
      const handles = (a.reply.more as Array<any>).map((m) => m.handle)
      expect(handles.length).toBe(2)
      for (const h of handles) expect(h).toMatch(/^h_[A-Za-z0-9_-]{12}$/)
      expect(new Set(handles).size).toBe(2)
    }))
  it.effect("drive EXPAND slices too", () =>
    Effect.gen(function* () {
      const f = fitReply({ kind: "ANSWER", data: rows(40) }, 60, ids())
      const s = yield* Effect.provide(expandSliceEffect(f.elided[0], 60), seeded)
      expect((s.reply.more as Array<any>)[0].handle).toMatch(/^h_[A-Za-z0-9_-]{12}$/)
    }))
})
