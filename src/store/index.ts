// Store Layers implementing the services the protocols declare: in memory (tests), SQLite (the
// embedded default: one file, WAL, every atomic step one transaction) and PostgreSQL (reservations
// shared by many workers).
export * as Memory from "./memory/index.js"
export * as Sqlite from "./sqlite/index.js"
export * as Postgres from "./postgres/index.js"
