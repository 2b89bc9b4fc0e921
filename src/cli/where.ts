// The command a run is in (`mandate writ issue`), for the `<where>` of an error line that names no
// file or member of its own. Provided by main.ts around every command's handler.
import { Context } from "effect"

export class CommandPath extends Context.Tag("mandate/cli/CommandPath")<CommandPath, string>() {}
