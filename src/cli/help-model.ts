// What a command's help says, as data: its options (names, value placeholder, description, whether
// optional or repeatable, default), its positional arguments and its subcommands. Read from the
// @effect/cli descriptor the command was declared with, so that the help text, the unknown-option
// check (help.ts) and the CLI reference page (reference.ts) all come from the one declaration.
//
// @effect/cli's own help prefixes every option with its type's stock sentence ("A user-defined
// piece of text.") and shows a subcommand's usage without the words that lead to it; so the help
// is rendered here from this model instead. The descriptor's instructions are @effect/cli's
// internal shape (pinned version), read through the narrow structural types below.
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Primitive from "@effect/cli/Primitive"
import { Option } from "effect"
import type { AnyCommand } from "./tree.js"

export interface OptionDoc {
  /** `--port`, then its aliases (`-p`). */
  readonly names: ReadonlyArray<string>
  /** The value's placeholder (`N`, `FILE`, `full|normal`), or undefined for a flag. */
  readonly value: string | undefined
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
  /** The value used when the option is absent, as text (flags and "none" defaults omitted). */
  readonly fallback: string | undefined
}

export interface ArgDoc {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

export interface CommandModel {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionDoc>
  readonly args: ReadonlyArray<ArgDoc>
  readonly subcommands: ReadonlyArray<CommandModel>
}

// The internal instructions, structurally (only the fields read here).
interface Doc { readonly _tag: string }
interface Prim { readonly _tag: string; readonly alternatives?: ReadonlyArray<readonly [string, unknown]> }
type Opt =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Single"; readonly name: string; readonly aliases: ReadonlyArray<string>; readonly primitiveType: Prim; readonly description: Doc; readonly pseudoName: Option.Option<string> }
  | { readonly _tag: "KeyValueMap"; readonly argumentOption: Opt }
  | { readonly _tag: "Map" | "WithFallback"; readonly options: Opt }
  | { readonly _tag: "WithDefault"; readonly options: Opt; readonly fallback: unknown }
  | { readonly _tag: "Both" | "OrElse"; readonly left: Opt; readonly right: Opt }
  | { readonly _tag: "Variadic"; readonly argumentOption: Opt; readonly min: Option.Option<number> }
type Arg =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Single"; readonly name: string; readonly pseudoName: Option.Option<string>; readonly description: Doc }
  | { readonly _tag: "Map" | "WithFallbackConfig"; readonly args: Arg }
  | { readonly _tag: "WithDefault"; readonly args: Arg }
  | { readonly _tag: "Both"; readonly left: Arg; readonly right: Arg }
  | { readonly _tag: "Variadic"; readonly args: Arg; readonly min: Option.Option<number> }
type Desc =
  | { readonly _tag: "Standard"; readonly name: string; readonly description: Doc; readonly options: Opt; readonly args: Arg }
  | { readonly _tag: "GetUserInput"; readonly name: string; readonly description: Doc }
  | { readonly _tag: "Map"; readonly command: Desc }
  | { readonly _tag: "Subcommands"; readonly parent: Desc; readonly children: ReadonlyArray<Desc> }

/** A HelpDoc as one plain line (no colour codes, whitespace collapsed). */
export const plain = (doc: Doc): string =>
  HelpDoc.toAnsiText(doc as HelpDoc.HelpDoc).replace(/\x1b\[[0-9;]*m/g, "").replace(/\s+/g, " ").trim()

const flagName = (n: string): string => (n.startsWith("-") ? n : n.length === 1 ? `-${n}` : `--${n}`)

const placeholder = (p: Prim, pseudo: Option.Option<string>): string | undefined => {
  if (p._tag === "Bool") return undefined
  if (Option.isSome(pseudo)) return pseudo.value
  if (p._tag === "Choice") return (p.alternatives ?? []).map(([name]) => name).join("|")
  // Unavoidable: `Prim` is our narrow view of @effect/cli's internal instruction; the library's
  // getTypeName takes its own (opaque) Primitive, which this value is at run time.
  const type = Primitive.getTypeName(p as unknown as Primitive.Primitive<unknown>)
  const names: Record<string, string> = { integer: "N", float: "NUMBER", file: "FILE", directory: "DIR", path: "PATH", text: "TEXT", date: "DATE" }
  return names[type] ?? type.toUpperCase()
}

const fallbackText = (v: unknown): string | undefined => {
  if (Option.isOption(v)) return undefined
  if (typeof v === "boolean") return undefined
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.join(", ")
  if (typeof v === "string" || typeof v === "number" || typeof v === "bigint") return String(v)
  return undefined
}

interface Mods { readonly optional: boolean; readonly repeated: boolean; readonly fallback: string | undefined }

const optionsOf = (o: Opt, m: Mods): Array<OptionDoc> => {
  switch (o._tag) {
    case "Empty": return []
    case "Single": {
      const value = placeholder(o.primitiveType, o.pseudoName)
      return [{
        names: [flagName(o.name), ...o.aliases.map(flagName)],
        value,
        description: plain(o.description),
        // A flag is off when absent: optional by nature.
        optional: m.optional || value === undefined,
        repeated: m.repeated,
        fallback: m.fallback
      }]
    }
    case "KeyValueMap": return optionsOf(o.argumentOption, m)
    case "Map": case "WithFallback": return optionsOf(o.options, o._tag === "WithFallback" ? { ...m, optional: true } : m)
    case "WithDefault": return optionsOf(o.options, { ...m, optional: true, fallback: fallbackText(o.fallback) })
    case "Both": return [...optionsOf(o.left, m), ...optionsOf(o.right, m)]
    // `--x` or its negation `--no-x`: both listed.
    case "OrElse": return [...optionsOf(o.left, m), ...optionsOf(o.right, m)]
    case "Variadic": return optionsOf(o.argumentOption, { ...m, repeated: true, optional: m.optional || Option.getOrElse(o.min, () => 0) === 0 })
  }
}

const argsOf = (a: Arg, m: Omit<Mods, "fallback">): Array<ArgDoc> => {
  switch (a._tag) {
    case "Empty": return []
    case "Single": return [{ name: Option.getOrElse(a.pseudoName, () => a.name), description: plain(a.description), ...m }]
    case "Map": case "WithFallbackConfig": return argsOf(a.args, m)
    case "WithDefault": return argsOf(a.args, { ...m, optional: true })
    case "Both": return [...argsOf(a.left, m), ...argsOf(a.right, m)]
    case "Variadic": return argsOf(a.args, { repeated: true, optional: m.optional || Option.getOrElse(a.min, () => 0) === 0 })
  }
}

const modelOf = (d: Desc): CommandModel => {
  switch (d._tag) {
    case "Standard": {
      return {
        name: d.name,
        description: plain(d.description),
        options: optionsOf(d.options, { optional: false, repeated: false, fallback: undefined }),
        args: argsOf(d.args, { optional: false, repeated: false }),
        subcommands: []
      }
    }
    case "GetUserInput": return { name: d.name, description: plain(d.description), options: [], args: [], subcommands: [] }
    case "Map": return modelOf(d.command)
    case "Subcommands": return { ...modelOf(d.parent), subcommands: d.children.map(modelOf) }
  }
}

/** The help model of a declared command (and of its own subcommands, if it has any). Unavoidable
 * cast: @effect/cli types the descriptor opaquely; `Desc` is the internal shape of the pinned
 * version, narrowed to what the help reads. */
export const commandModel = (command: AnyCommand): CommandModel => modelOf(command.descriptor as unknown as Desc)
