// The example calendar (docs/bench-RESULTS.md "Reschedule a meeting"): find events, reschedule one
// (low risk, undoable for 24 h), cancel one (medium risk, irreversible). Its world is a Ref made per
// service, so tests and the demo get a fresh calendar each time.
import { Effect, Ref } from "effect"
import { yeaError } from "../yea/reason.js"
import { ask, clarify, intent, plans, type ServiceSpec } from "../yea/service/define.js"

export interface CalendarEvent {
  readonly id: string
  readonly title: string
  readonly start: string
  readonly end: string
  readonly attendees: ReadonlyArray<string>
}

export const CALENDAR_ID = "calendar.example"

const seed: ReadonlyArray<CalendarEvent> = [
  { id: "e1", title: "Design review", start: "2026-09-28T10:00:00Z", end: "2026-09-28T11:00:00Z", attendees: ["li.wei@acme.co", "sam.o@acme.co"] },
  { id: "e2", title: "1:1 with Ana", start: "2026-09-28T14:00:00Z", end: "2026-09-28T14:30:00Z", attendees: ["ana.ruiz@acme.co"] },
  { id: "e3", title: "1:1 with Ben", start: "2026-09-29T09:00:00Z", end: "2026-09-29T09:30:00Z", attendees: ["ben.k@acme.co"] },
  { id: "e4", title: "Sprint planning", start: "2026-09-30T13:00:00Z", end: "2026-09-30T14:30:00Z", attendees: ["team@acme.co"] }
]

const ms = (iso: string) => Date.parse(iso)
const iso = (t: number) => new Date(t).toISOString().replace(".000Z", "Z")

const overlaps = (events: ReadonlyArray<CalendarEvent>, skip: string, start: number, end: number) =>
  events.find((e) => e.id !== skip && ms(e.start) < end && start < ms(e.end))

/** First free half hour on the day after the event's, from 09:30, skipping busy slots. */
const firstFree = (events: ReadonlyArray<CalendarEvent>, e: CalendarEvent, length: number): string => {
  const day = ms(e.start.slice(0, 10) + "T00:00:00Z") + 2 * 86_400_000
  for (let t = day + 9.5 * 3_600_000; t < day + 18 * 3_600_000; t += 1_800_000) {
    if (overlaps(events, e.id, t, t + length) === undefined) return iso(t)
  }
  return iso(day + 18 * 3_600_000)
}

export const calendarService = (trust: ReadonlyArray<string>) =>
  Effect.map(Ref.make<ReadonlyArray<CalendarEvent>>(seed), (world): ServiceSpec => {
    const find = (ref: string) =>
      Effect.flatMap(Ref.get(world), (events) => {
        const byId = events.filter((e) => e.id === ref)
        const hits = byId.length > 0 ? byId : events.filter((e) => e.title.toLowerCase().includes(ref.toLowerCase()))
        return Effect.succeed({ events, hits })
      })
    const setStart = (id: string, start: string, end: string) =>
      Ref.update(world, (es) => es.map((e) => (e.id === id ? { ...e, start, end } : e)))
    return {
      id: CALENDAR_ID,
      name: "Example Calendar",
      summary: "Your calendar. Find time, move and cancel meetings.",
      trust,
      capabilities: {
        "calendar.find": ask({
          summary: "Search events",
          params: { "query?": "string", "day?": "date" },
          run: ({ params }) =>
            Effect.map(Ref.get(world), (events) =>
              events.filter(
                (e) =>
                  (params.query === undefined || e.title.toLowerCase().includes(String(params.query).toLowerCase())) &&
                  (params.day === undefined || e.start.startsWith(String(params.day)))
              )
            )
        }),
        "calendar.reschedule": intent({
          summary: "Move a meeting",
          params: { event: "string — id or title", "to?": "datetime — new start; the first free slot when absent" },
          risk: "low",
          plan: ({ params }) =>
            Effect.gen(function* () {
              const { events, hits } = yield* find(String(params.event))
              if (hits.length === 0) return yield* Effect.fail(yeaError("not_found", `no event matches ${JSON.stringify(params.event)}`))
              if (hits.length > 1) return clarify("Which meeting?", hits.map((h) => ({ label: `${h.title} (${h.start})`, params: { event: h.id } })))
              const e = hits[0]
              const length = ms(e.end) - ms(e.start)
              const to = typeof params.to === "string" ? iso(ms(params.to)) : firstFree(events, e, length)
              const clash = overlaps(events, e.id, ms(to), ms(to) + length)
              if (clash !== undefined) {
                const free = firstFree(events, e, length)
                return yield* Effect.fail(
                  yeaError("conflict", `${to} overlaps ${JSON.stringify(clash.title)}`, { fix: [{ say: `use free slot ${free}`, params: { to: free } }] })
                )
              }
              return plans({
                summary: `Move ${JSON.stringify(e.title)} to ${to}`,
                effects: [
                  { op: "update", target: `event/${e.id}`, field: "start", from: e.start, to },
                  ...e.attendees.map((a) => ({ op: "send" as const, target: a, detail: "updated invite" }))
                ],
                undoWindow: 86_400,
                action: { event: e.id, from: e.start, to, length }
              })
            }),
          commit: (action) =>
            Effect.gen(function* () {
              const a = action as { event: string; to: string; length: number }
              yield* setStart(a.event, a.to, iso(ms(a.to) + a.length))
              return { event: a.event, start: a.to }
            }),
          undo: (action) =>
            Effect.gen(function* () {
              const a = action as { event: string; from: string; length: number }
              yield* setStart(a.event, a.from, iso(ms(a.from) + a.length))
              return { event: a.event, start: a.from }
            })
        }),
        "calendar.cancel": intent({
          summary: "Cancel a meeting and tell its attendees",
          params: { event: "string — id or title" },
          risk: "medium",
          plan: ({ params }) =>
            Effect.gen(function* () {
              const { hits } = yield* find(String(params.event))
              if (hits.length !== 1) return yield* Effect.fail(yeaError("not_found", `no single event matches ${JSON.stringify(params.event)}`))
              const e = hits[0]
              return plans({
                summary: `Cancel ${JSON.stringify(e.title)}`,
                effects: [{ op: "delete", target: `event/${e.id}` }, ...e.attendees.map((a) => ({ op: "send" as const, target: a, detail: "cancellation" }))],
                uses: { emails: { amount: e.attendees.length } },
                action: { event: e.id }
              })
            }),
          commit: (action) =>
            Effect.as(Ref.update(world, (es) => es.filter((e) => e.id !== (action as { event: string }).event)), { cancelled: (action as { event: string }).event })
        })
      }
    }
  })
