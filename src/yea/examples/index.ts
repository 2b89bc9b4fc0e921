// The example services (issue 7, item 6): used by the tests, `mandate yea demo` and the benchmarks.
export * from "./calendar.js"
export * from "./shop.js"
