// The example YEA services as runtimes, by name: what `mandate yea serve`, `yea demo` and
// `yea test-drive` serve when no service of the user's is named. Here, above app/, because
// app/ composes services it is given and never reaches up into the examples (docs/layout.md).
import { Effect } from "effect"
import type { StateContext } from "../yea/service/env.js"
import { makeService, type YeaServiceRuntime } from "../yea/service/runtime.js"
import { calendarService } from "./calendar.js"
import { shopService } from "./shop.js"

export type ExampleName = "calendar" | "shop"

export const exampleRuntime = (name: ExampleName, trust: ReadonlyArray<string>): Effect.Effect<YeaServiceRuntime, never, StateContext> =>
  Effect.flatMap(name === "calendar" ? calendarService(trust) : shopService(trust), (spec) => makeService(spec))
