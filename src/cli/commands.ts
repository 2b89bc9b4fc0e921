// The subcommand groups of `mandate`, in the order `--help` lists them.
import { writCommand } from "./writ.js"
import { yeaCommand } from "./yea.js"
import { demoCommand } from "./demo.js"
import { keygenCommand } from "./keygen.js"

export const commands = [keygenCommand, writCommand, yeaCommand, demoCommand] as const
