// Every command's help, walked over the whole command tree: the usage line names the whole command,
// optional options are bracketed, every option and argument has its own description (never the
// stock type sentence), and no colour codes unless stdout is a terminal and NO_COLOR is unset.
// Then the usage checks before a command runs: an unknown option is named as given, an unknown
// command lists its group's commands.
import { describe, expect, it } from "@effect/vitest"
import { PassThrough, Readable } from "node:stream"
import { select } from "../../src/cli/help.js"
import { run } from "../../src/cli/run.js"
import { isGroup, tree } from "../../src/cli/tree.js"
import { runCli } from "../support/cli.js"

/** Every command path, nested subcommands (`writ files run`) included. */
const allPaths = async (): Promise<Array<ReadonlyArray<string>>> => {
  const paths: Array<ReadonlyArray<string>> = []
  for (const e of tree) {
    const top = isGroup(e) ? e.subcommands.map((s) => [e.name, s.name]) : [[e.name]]
    for (const p of top) {
      paths.push(p)
      for (const sub of (await select(p)).model.subcommands) paths.push([...p, sub.name])
    }
  }
  return paths
}

/** The help of `args` with stdout a terminal or not, in the environment `env`. */
const helpAt = async (args: ReadonlyArray<string>, isTTY: boolean, env: NodeJS.ProcessEnv): Promise<string> => {
  const out = Object.assign(new PassThrough(), { isTTY })
  let text = ""
  out.on("data", (d: Buffer) => { text += d.toString() })
  const status = await run(args, { stdout: out, stderr: new PassThrough(), stdin: Readable.from([]), env })
  await new Promise<void>((resolve) => setImmediate(resolve))
  expect(status).toBe(0)
  return text
}

describe("mandate --help, over the whole command tree", () => {
  it("names the whole command, describes every option and argument, never the stock type sentence", async () => {
    const paths = await allPaths()
    expect(paths.length).toBeGreaterThan(40)
    for (const path of [[], ["writ"], ["yea"], ["ledger"], ...paths]) {
      const r = await runCli([...path, "--help"])
      const where = `mandate ${path.join(" ")} --help`
      expect(r.status, where).toBe(0)
      expect(r.stderr, where).toBe("")
      expect(r.stdout, where).not.toMatch(/A user-defined piece of text|An integer\.|An existing file\.|A true or false value\./)
      expect(r.stdout, where).not.toContain("\x1b")
      const usage = r.stdout.split("\n")[r.stdout.split("\n").indexOf("Usage") + 1]
      expect(usage.trim().split(" ").slice(0, path.length + 1), where).toEqual(["mandate", ...path])
      const model = (await select(path)).model
      for (const o of model.options) {
        expect(o.description, `${where}: ${o.names[0]}`).not.toBe("")
        expect(r.stdout, where).toContain(`  ${o.names[0]}`)
      }
      for (const a of model.args) expect(a.description, `${where}: ${a.name}`).not.toBe("")
    }
  })

  it("brackets optional options and leaves required ones bare", async () => {
    const r = await runCli(["writ", "serve", "--help"])
    const usage = r.stdout.slice(r.stdout.indexOf("Usage"), r.stdout.indexOf("Options")).replace(/\s+/g, " ")
    expect(usage).toContain("mandate writ serve [--port N] [--host TEXT] --store TEXT --key FILE [--root TEXT]...")
    expect(usage).toContain("[--allow-anonymous]")
    expect(r.stdout).toMatch(/--port N\n\s+TCP port[^\n]*\(optional; default: 8080\)/)
  })

  it("prints bold headings only to a terminal, and none when NO_COLOR is set", async () => {
    const env = { ...process.env }
    delete env.NO_COLOR
    expect(await helpAt(["writ", "verify", "--help"], true, env)).toContain("\x1b[1mUsage\x1b[0m")
    expect(await helpAt(["writ", "verify", "--help"], true, { ...env, NO_COLOR: "1" })).not.toContain("\x1b")
    expect(await helpAt(["writ", "verify", "--help"], false, env)).not.toContain("\x1b")
    expect(await helpAt([], false, env)).not.toContain("\x1b")
  })

  it("prints a group's help for the group alone, and the version", async () => {
    const r = await runCli(["ledger"])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("mandate ledger <command>")
    expect(r.stdout).toContain("  recover")
    expect((await runCli(["--version"])).stdout).toBe("mandate 0.1.0\n")
    const root = await runCli([])
    expect(root.status).toBe(0)
    expect(root.stdout).toContain("\nUsage\n  mandate <command>\n")
  })
})

describe("usage errors name what was wrong", () => {
  it("names an unknown option as given, with the nearest known one", async () => {
    const a = await runCli(["writ", "verify", "--bogus", "x"])
    expect(a.status).toBe(1)
    expect(a.stderr).toBe("error: mandate/usage at mandate writ verify: unknown option --bogus; see `mandate writ verify --help`\n")
    const b = await runCli(["writ", "serve", "--prot=3"])
    expect(b.stderr).toContain("unknown option --prot (did you mean --port?)")
    const c = await runCli(["writ", "files", "run", "--kye", "k", "DIR"])
    expect(c.stderr).toContain("at mandate writ files run: unknown option --kye (did you mean --key?)")
    const d = await runCli(["yea", "--json"])
    expect(d.stderr).toContain("error: mandate/usage at mandate yea: unknown option --json")
  })

  it("takes a word after an option that has a value as its value, whatever it looks like", async () => {
    // `--ledger` takes a value: `--strange` is the ledger's name, not an option (the store is
    // missing, so the command itself fails, later, for that reason).
    const r = await runCli(["ledger", "stats", "/nonexistent/ledger.db", "--ledger", "--strange"])
    expect(r.stderr).not.toContain("unknown option")
    expect(r.stderr).toContain("ledger_missing")
  })

  it.each([
    ["yea", "mcp-example"],
    ["writ", "mcp-proxy"],
    ["ledger", "recover"]
  ])("an unknown `mandate %s` command lists that group's commands", async (group, one) => {
    const r = await runCli([group, "bogus", "--x"])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(new RegExp(`^error: mandate/usage at mandate ${group}: unknown command 'bogus'; the commands of mandate ${group} are: .*\\b${one}\\b`))
    expect(r.stderr).not.toContain("keygen")
  })

  it("a command that only holds subcommands answers as a group does", async () => {
    const help = await runCli(["writ", "files"])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("mandate writ files <command>")
    const r = await runCli(["writ", "jws", "wrp", "x.json"])
    expect(r.status).toBe(1)
    expect(r.stderr).toBe("error: mandate/usage at mandate writ jws: unknown command 'wrp' (did you mean 'wrap'?); the commands of mandate writ jws are: wrap, unwrap\n")
  })

  it("an unknown top-level command lists mandate's commands, with the nearest one", async () => {
    const r = await runCli(["leger", "stats"])
    expect(r.stderr).toMatch(/^error: mandate\/usage at mandate: unknown command 'leger' \(did you mean 'ledger'\?\); the commands of mandate are: keygen, gateway, writ, yea, ledger, /)
  })
})
