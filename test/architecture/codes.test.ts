// Codes as data: every `mandate/...` code written anywhere in src/ is a member of one of the
// literal unions that define them (the application's in src/app/codes.ts, the executor's, the HTTP
// and MCP bindings'), each defined by one union (a use site is then checked by its type); and the Writ bindings take their shared codes
// (`missing_call`, ...) from src/writ/binding-reason.ts instead of spelling them again.
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { AppCode, ExecutorOwnCode, OwnCode } from "../../src/app/codes.js"
import { HTTP_CODES, WritHttpCode } from "../../src/bind/writ-http/server.js"
import { McpImplementationCode } from "../../src/bind/writ-mcp/reason.js"
import { repoRoot } from "../support/shared.js"

const src = join(repoRoot, "src")
const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : []
  })
const all = files(src).map((f) => ({ file: relative(src, f), text: readFileSync(f, "utf8") }))

/**
 * Every code literal: a double-quoted or backquoted `mandate/` and a lower-case name (service tags
 * are `mandate/Name` or `mandate/area/Name`; single quotes are SQL text, e.g. advisory lock keys).
 */
const codeLiterals = all.flatMap(({ file, text }) =>
  [...text.matchAll(/["`](mandate\/[a-z][a-z_]*)["`]/g)].map((m) => ({ file, code: m[1] })))

const members: ReadonlyArray<(u: unknown) => boolean> = [Schema.is(AppCode), Schema.is(WritHttpCode), Schema.is(McpImplementationCode)]
const isCode = (code: string) => members.some((is) => is(code))

describe("codes as data", () => {
  it("every mandate/ code in src is a member of a code union", () => {
    expect(codeLiterals.length).toBeGreaterThan(30)
    expect(codeLiterals.filter((c) => !isCode(c.code)).map((c) => `${c.file}: ${c.code}`)).toEqual([])
  })

  it("each code is defined by one union only", () => {
    const own = OwnCode.literals as ReadonlyArray<string>
    const others = [...ExecutorOwnCode.literals, ...WritHttpCode.literals, ...McpImplementationCode.literals] as ReadonlyArray<string>
    expect(own.filter((c) => others.includes(c))).toEqual([])
    expect(new Set(WritHttpCode.literals).size).toBe(Object.keys(HTTP_CODES).length)
  })

  it("a code outside the unions is not one", () => {
    expect(isCode("mandate/no_such_code")).toBe(false)
    expect(Schema.is(AppCode)("mandate/usage")).toBe(true)
    expect(Schema.is(AppCode)("mandate/no_sub")).toBe(true)
  })

  it("the Writ bindings spell their shared codes once (writ/binding-reason.ts)", () => {
    const shared = ["missing_call", "missing_tally", "result_mismatch"]
    const unions = ["bind/writ-file/errors.ts", "bind/writ-a2a/errors.ts", "bind/writ-gate/errors.ts", "bind/writ-mcp/reason.ts"]
    const repeated = all
      .filter(({ file }) => unions.includes(file))
      .flatMap(({ file, text }) => shared.filter((c) => new RegExp(`Schema\\.Literal\\([^)]*"${c}"`).test(text) || new RegExp(`^\\s*"${c}",?$`, "m").test(text)).map((c) => `${file}: ${c}`))
    expect(repeated).toEqual([])
  })
})
