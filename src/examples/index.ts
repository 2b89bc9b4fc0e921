// The examples, one home: the YEA services the demo, the tests and the benchmarks serve (the
// calendar and the shop), and the MCP server with job tools behind `mandate yea mcp-example`
// (billing-mcp.ts). The Writ handler modules beside them (payment.ts, booking.ts) and the ledger
// example (ledger-budget.mjs) are loaded by path, as a user's module would be, so they are not
// re-exported here.
export { CALENDAR_ID, calendarService } from "./calendar.js"
export { MENU, SHOP_ID, shopService } from "./shop.js"
export { billingServer, type Book, newBook } from "./billing-mcp.js"
