// The Reservations suite on the in-memory store, with the model-based property test at 1000 runs.
import { Effect } from "effect"
import { MemoryJournal } from "../../src/store/memory/atomic.js"
import { ReservationStore } from "../../src/accounting/backend.js"
import { layer } from "../../src/store/memory/reservations.js"
import { type Harness, reservationSuite } from "./suite.js"
import { depth } from "../support/depth.js"

// The caller's own memory store: a set written through the same journal.
const callerRows = new Set<string>()
const harness: Harness<MemoryJournal | ReservationStore> = {
  name: "memory",
  layer,
  backend: ReservationStore,
  callerWrite: (name) =>
    Effect.flatMap(MemoryJournal, (j) => j.write(() => void callerRows.add(name), () => void callerRows.delete(name))),
  callerHas: (name) => Effect.sync(() => callerRows.has(name)),
  propertyRuns: depth(1000),
  racers: 50
}

reservationSuite(harness)
