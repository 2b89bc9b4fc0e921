// The example services (issue 7, item 6): used by the tests, `mandate yea demo` and the benchmarks.
export { CALENDAR_ID, calendarService } from "./calendar.js"
export { MENU, SHOP_ID, shopService } from "./shop.js"
