// Every in-memory store a YEA service needs, on one MemoryJournal (one Atomic): the four YEA state
// stores and Reservations for `total` limits.
import { Layer } from "effect"
import type { ReservationStore } from "../../accounting/backend.js"
import type { Atomic, Reservations } from "../../accounting/reservations.js"
import type { YeaState } from "../../yea/state.js"
import * as MemoryAtomic from "./atomic.js"
import type { MemoryJournal } from "./atomic.js"
import * as MemoryReservations from "./reservations.js"
import * as Auto from "./yea-auto.js"
import * as Commits from "./yea-commits.js"
import * as Handles from "./yea-handles.js"
import * as Proposals from "./yea-proposals.js"

export const layer: Layer.Layer<YeaState | Reservations | ReservationStore | Atomic | MemoryJournal> = Layer.mergeAll(
  Proposals.layer,
  Commits.layer,
  Auto.layer,
  Handles.layer,
  MemoryReservations.layerWithJournal
).pipe(Layer.provideMerge(MemoryAtomic.layer))
