// `--help` and the usage checks that come before a command runs, from the help model
// (help-model.ts) of the command the arguments select:
//
// - the help text of the root, a group (`mandate yea`) or a command: its usage line naming the
//   whole command (`mandate writ serve ...`), optional options in brackets, each option with its
//   own description; bold headings only when stdout is a terminal and NO_COLOR is unset
//   (no-color.org: set and not empty);
// - an unknown command under a group, answered with that group's commands;
// - an unknown option, answered with the option as given (and the nearest known one).
//
// The checks return the `mandate/usage` line's text; run.ts prints it as every other failure.
import { commandModel, type CommandModel, type OptionDoc } from "./help-model.js"
import { commandWords, type Entry, isGroup, ROOT_DESCRIPTION, tree } from "./tree.js"
import { editDistance } from "../kernel/edit-distance.js"

/** Options every command takes (@effect/cli's built-ins, of which the help shows these). */
const BUILT_IN: ReadonlyArray<OptionDoc> = [
  { names: ["--help", "-h"], value: undefined, description: "Show this help and exit", optional: true, repeated: false, fallback: undefined }
]
const ROOT_ONLY: ReadonlyArray<OptionDoc> = [
  { names: ["--version"], value: undefined, description: "Print the version and exit", optional: true, repeated: false, fallback: undefined }
]
/** Every option @effect/cli itself accepts on any command (not listed in the help but never unknown). */
const BUILT_IN_NAMES: ReadonlyMap<string, boolean> = new Map([
  ["--help", false], ["-h", false], ["--version", false], ["--wizard", false], ["--completions", true], ["--log-level", true]
])

/** What a command line selects: the words that name it and its help model. */
export interface Selected {
  /** `["writ", "files", "run"]`: every command word, nested subcommands included. */
  readonly path: ReadonlyArray<string>
  readonly model: CommandModel
  /** The commands to choose from when the path ends before a command that runs: at the root, a
   * group, or a command that only holds subcommands (`writ files`). */
  readonly group: ReadonlyArray<{ readonly name: string }> | undefined
  /** The option models of every command on the path (a nested command also takes its parent's). */
  readonly options: ReadonlyArray<OptionDoc>
}

const groupModel = (name: string, description: string, entries: ReadonlyArray<Entry>): CommandModel => ({
  name,
  description,
  options: [],
  args: [],
  subcommands: entries.map((e) => ({ name: e.name, description: e.description, options: [], args: [], subcommands: [] }))
})

/** The command `args` select (loading its module when it is a command, not a group). */
export const select = async (args: ReadonlyArray<string>): Promise<Selected> => {
  const words = commandWords(args)
  const path: Array<string> = []
  let level: ReadonlyArray<Entry> = tree
  let model = groupModel("mandate", ROOT_DESCRIPTION, tree)
  for (const [i, w] of words.entries()) {
    const e = level.find((x) => x.name === w)
    if (e === undefined) break
    path.push(w)
    if (isGroup(e)) {
      level = e.subcommands
      model = groupModel(e.name, e.description, e.subcommands)
      continue
    }
    // A command; it may have subcommands of its own (`writ files run`).
    let m: CommandModel = { ...commandModel(await e.load()), description: e.description }
    const options: Array<OptionDoc> = [...m.options]
    for (const sub of words.slice(i + 1)) {
      const child = m.subcommands.find((c) => c.name === sub)
      if (child === undefined) break
      path.push(sub)
      m = child
      options.push(...child.options)
    }
    // A command that only holds subcommands needs one of them, as a group does.
    const holder = m.subcommands.length > 0 && m.options.length === 0 && m.args.length === 0
    return { path, model: m, group: holder ? m.subcommands : undefined, options }
  }
  return { path, model, group: level, options: [] }
}

// ---------------------------------------------------------------------------------------------
// The help text

const WIDTH = 100

/** `words` laid out in lines of at most WIDTH columns (a longer word alone on its line); a word
 * (`[--window NAME=LO,HI]...`) is never split. */
const wrapWords = (words: ReadonlyArray<string>, indent: string, first = indent): Array<string> => {
  const lines: Array<string> = []
  let line = first
  for (const word of words) {
    if (line.trim() !== "" && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = indent + word
    } else {
      line = line.trim() === "" ? line + word : `${line} ${word}`
    }
  }
  if (line.trim() !== "") lines.push(line)
  return lines
}

const wrap = (text: string, indent: string, first = indent): Array<string> => wrapWords(text.split(" "), indent, first)

const optionWords = (o: OptionDoc): string => `${o.names[0]}${o.value === undefined ? "" : ` ${o.value}`}`

const usageWord = (o: OptionDoc): string => {
  const w = optionWords(o)
  return `${o.optional ? `[${w}]` : w}${o.repeated ? "..." : ""}`
}

/** The usage line's words after the command's own: options (in declaration order), then arguments. */
const usageWords = (m: CommandModel): Array<string> => [
  ...(m.subcommands.length > 0 ? ["<command>"] : []),
  ...m.options.map(usageWord),
  ...m.args.map((a) => `${a.optional ? `[${a.name}]` : a.name}${a.repeated ? "..." : ""}`)
]

/** What the usage line's brackets say, in words, unless the description says it already. */
const optionNotes = (o: OptionDoc): string => {
  const says = (w: RegExp) => w.test(o.description)
  const notes = [
    ...(o.value !== undefined && o.optional && !o.repeated && !says(/\boptional\b/i) ? ["optional"] : []),
    ...(o.repeated && !says(/\brepeat/i) ? ["repeatable"] : []),
    ...(o.fallback !== undefined && !says(/\bdefault\b/i) ? [`default: ${o.fallback}`] : [])
  ]
  return notes.length === 0 ? "" : ` (${notes.join("; ")})`
}

/** `mandate writ serve`'s help text, as it prints (`colour`: bold headings). */
export const renderHelp = (path: ReadonlyArray<string>, m: CommandModel, colour: boolean): string => {
  const heading = (t: string) => (colour ? `\x1b[1m${t}\x1b[0m` : t)
  const whole = ["mandate", ...path].join(" ")
  const out: Array<string> = []
  out.push(...wrap(m.description === "" ? whole : `${whole}: ${m.description}`, "  ", ""))
  out.push("", heading("Usage"))
  out.push(...wrapWords(usageWords(m), "      ", `  ${whole}`))
  if (m.args.length > 0) {
    out.push("", heading("Arguments"))
    for (const a of m.args) {
      out.push(`  ${a.name}${a.repeated ? "..." : ""}`)
      out.push(...wrap(a.description + (a.optional ? " (optional)" : ""), "      "))
    }
  }
  if (m.subcommands.length > 0) {
    out.push("", heading("Commands"))
    const width = Math.max(...m.subcommands.map((s) => s.name.length)) + 2
    for (const s of m.subcommands) out.push(...wrap(s.description, " ".repeat(width + 3), `  ${s.name.padEnd(width)}`))
  }
  const options = [...m.options, ...BUILT_IN, ...(path.length === 0 ? ROOT_ONLY : [])]
  out.push("", heading("Options"))
  for (const o of options) {
    out.push(`  ${[optionWords(o), ...o.names.slice(1)].join(", ")}`)
    out.push(...wrap(o.description + optionNotes(o), "      "))
  }
  if (m.subcommands.length > 0) out.push("", `Run \`${whole} <command> --help\` for a command's options.`)
  return out.join("\n") + "\n"
}

/** Colour only on a terminal, and never when NO_COLOR is set to anything but the empty string. */
export const useColour = (isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean =>
  isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")

// ---------------------------------------------------------------------------------------------
// The checks before a command runs

/** The arguments up to `--` (after which nothing is an option). */
const beforeDashes = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const i = args.indexOf("--")
  return i < 0 ? args : args.slice(0, i)
}

export const wantsHelp = (args: ReadonlyArray<string>): boolean =>
  beforeDashes(args).some((a) => a === "--help" || a === "-h")

/** `writ bogus`: the word that names no command of the group the path ends at, if any. */
export const unknownCommand = (args: ReadonlyArray<string>, s: Selected): string | undefined => {
  if (s.group === undefined) return undefined
  const word = commandWords(args)[s.path.length]
  if (word === undefined) return undefined
  const whose = ["mandate", ...s.path].join(" ")
  const near = nearest(word, s.group.map((e) => e.name))
  return `unknown command '${word}'${near === undefined ? "" : ` (did you mean '${near}'?)`}; the commands of ${whose} are: ${s.group.map((e) => e.name).join(", ")}`
}

/** `--bogus`: the first option word no command on the path declares, if any. A word after an
 * option that takes a value is that value, whatever it looks like. */
export const unknownOption = (args: ReadonlyArray<string>, s: Selected): string | undefined => {
  const known = new Map<string, boolean>(BUILT_IN_NAMES)
  for (const o of s.options) for (const n of o.names) known.set(n, o.value !== undefined)
  const words = beforeDashes(args)
  for (let i = 0; i < words.length; i++) {
    const w = words[i]
    // A negative number is a value, not an option; `-` alone means stdin.
    if (!w.startsWith("-") || w === "-" || /^-\d/.test(w)) continue
    const name = w.includes("=") ? w.slice(0, w.indexOf("=")) : w
    const takesValue = known.get(name)
    if (takesValue === undefined) {
      const near = nearest(name, [...known.keys()].filter((k) => !BUILT_IN_NAMES.has(k)))
      return `unknown option ${name}${near === undefined ? "" : ` (did you mean ${near}?)`}; see \`${["mandate", ...s.path].join(" ")} --help\``
    }
    if (takesValue && !w.includes("=")) i++
  }
  return undefined
}

/** The candidate within edit distance 2 (and under half the word), if one is nearest. */
const nearest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestD = Math.min(3, Math.ceil(word.length / 2))
  for (const c of candidates) {
    const d = editDistance(word, c)
    if (d < bestD) {
      best = c
      bestD = d
    }
  }
  return best
}

