// The accounting core: Reservations (reserve -> commit | release | settleFailure, all or nothing
// over several limit keys), the Atomic transaction boundary, the shared StoreError, and exact
// decimal helpers. Store Layers live in src/store/{memory,sqlite,postgres}.
export {
  type Actual, Atomic, type AtomicService, LimitExhausted, type LimitSpec, type OnFailure, type Reservation,
  ReservationConflict, ReservationInvalid, ReservationInvalidReason, ReservationNotFound, Reservations,
  ReservationSettled, type ReservationsService, type Reserved, type ReserveError, type Settled,
  type SettleError, SettlementInvalid, SettlementInvalidReason, StoreError
} from "./reservations.js"
export { storeError } from "./store-error.js"
export { type ReservationBackend, ReservationStore, type ReserveStep } from "./backend.js"
export { firstShort, layer as reservationsLayer, makeReservations } from "./core.js"
export { compareDecimal, rescale } from "./decimal.js"
export { DecisionEvents, type DecisionEventsService, publishDecision, ProtocolDecision, DecisionKind, DecisionProtocol, DecisionAmount } from "./decision-events.js"
