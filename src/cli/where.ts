// The command a run is in (`mandate writ issue`), for the `<where>` of an error line that names no
// file or member of its own. Provided by main.ts around every command's handler.
import { Context } from "effect"

// A Reference: a handler run outside main.ts (a test, a library caller) is plain `mandate`.
export class CommandPath extends Context.Reference<CommandPath>()("mandate/cli/CommandPath", { defaultValue: () => "mandate" }) {}
