// How deep property tests search: one setting for the whole suite. `npm test` (the unit project,
// run between changes) checks every property at a tenth of its written depth (at least 100
// cases); `npm run test:all` sets MANDATE_PROPERTY_DEPTH=full and runs each at the depth it was
// written with. The seeds are fixed either way, so the fast run checks the first cases of the
// full run's sequence, never different ones.
export const fullDepth: boolean = process.env.MANDATE_PROPERTY_DEPTH === "full"

/** The number of runs for a property written to run `full` times; `least` is the fewest a fast
 * run may do (a property whose coverage is itself checked needs enough cases to reach it). */
export const depth = (full: number, least = 100): number => (fullDepth ? full : Math.min(full, Math.max(least, Math.round(full / 10))))
