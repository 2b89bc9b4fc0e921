// `mandate demo`: the end-to-end demonstration (npm start). Until the three-agent demo lands it
// prints what it will show and the commands available.
import { Command } from "@effect/cli"
import { Console } from "effect"

export const demoCommand = Command.make("demo", {}, () =>
  Console.log("mandate demo: the three-agent demo is not built yet; run `npx mandate --help` for the commands")
).pipe(Command.withDescription("Run the end-to-end demo on embedded SQLite"))
