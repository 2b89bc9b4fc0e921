// The examples, one home: the YEA services the demo, the tests and the benchmarks serve (the
// calendar and the shop), and the MCP server with job tools behind `mandate yea mcp-example`
// (billing-mcp.ts). The programs beside them are run or loaded by path, as a user's would be, so
// they are not re-exported here: the Writ handler modules payment.ts and booking.ts, the orders API
// behind `writ gate` (orders-api.ts), the MCP job server refund-jobs.ts and the ledger example
// ledger-budget.mjs.
export { CALENDAR_ID, calendarService } from "./calendar.js"
export { MENU, SHOP_ID, shopService } from "./shop.js"
export { billingServer, type Book, newBook } from "./billing-mcp.js"
