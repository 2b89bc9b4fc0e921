// PostgreSQL stores: reservations shared by many workers (row locks in key order).
export * as Client from "./client.js"
export * as Reservations from "./reservations.js"
export * as Yea from "./yea.js"
