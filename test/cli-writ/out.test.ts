// `--out` never overwrites a file unless `--force`, and never writes through a
// symbolic link (writ-io.ts `writeJson`, shared by issue, delegate, call, revoke and send), on the
// real file system in a scoped temporary folder.
import { NodeContext } from "@effect/platform-node"
import { FileSystem, Path } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { writeJson } from "../../src/cli/writ-io.js"

const folder = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = yield* fs.makeTempDirectoryScoped({ prefix: "mandate-out-" })
  return { fs, p: (f: string) => path.join(dir, f) }
})

layer(NodeContext.layer)((it) => {
  describe("--out refuses an existing file unless --force and never follows a symlink", () => {
    it.scoped("writes a new file; refuses an existing one; --force replaces it", () =>
      Effect.gen(function*() {
        const { fs, p } = yield* folder
        yield* writeJson(p("a.json"), { v: 1 })
        expect(JSON.parse(yield* fs.readFileString(p("a.json")))).toEqual({ v: 1 })
        const again = yield* Effect.flip(writeJson(p("a.json"), { v: 2 }))
        expect([again.reason, again.path]).toEqual(["mandate/exists", p("a.json")])
        expect(JSON.parse(yield* fs.readFileString(p("a.json")))).toEqual({ v: 1 })
        yield* writeJson(p("a.json"), { v: 3 }, true)
        expect(JSON.parse(yield* fs.readFileString(p("a.json")))).toEqual({ v: 3 })
      }))

    it.scoped("never writes through a symbolic link, to an existing target or a dangling one, with or without --force", () =>
      Effect.gen(function*() {
        const { fs, p } = yield* folder
        yield* fs.writeFileString(p("target"), "precious\n")
        yield* fs.symlink(p("target"), p("link.json"))
        yield* fs.symlink(p("nowhere"), p("dangling.json"))
        for (const [file, force] of [["link.json", false], ["link.json", true], ["dangling.json", false], ["dangling.json", true]] as const) {
          const e = yield* Effect.flip(writeJson(p(file), { v: 1 }, force))
          expect([file, force, e.reason]).toEqual([file, force, "mandate/symlink"])
        }
        expect(yield* fs.readFileString(p("target"))).toBe("precious\n")
        expect(yield* fs.exists(p("nowhere"))).toBe(false)
        expect(yield* fs.readLink(p("link.json"))).toBe(p("target"))
      }))

    it.scoped("--force does not replace a folder; a missing parent folder is unwritable", () =>
      Effect.gen(function*() {
        const { fs, p } = yield* folder
        yield* fs.makeDirectory(p("d.json"))
        expect((yield* Effect.flip(writeJson(p("d.json"), { v: 1 }, true))).reason).toBe("mandate/exists")
        expect((yield* Effect.flip(writeJson(p("d.json"), { v: 1 }))).reason).toBe("mandate/exists")
        expect((yield* Effect.flip(writeJson(p("no/such.json"), { v: 1 }))).reason).toBe("mandate/unwritable")
      }))
  })
})
