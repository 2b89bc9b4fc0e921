// The local, unsigned policy file (`policy.json` in the YEA home; the policy guide, "Two files
// called policy"; SPEC-mcp-ts `tighten`): read on every call, so an edit applies without a
// restart. It can only tighten: its `deny` joins the server's own and its `outOfBand` wins when
// it is stricter (tighten.ts `mergeTightening`). What this returns is handed to `readTightening`:
// no file is `undefined` (nothing to add); a file that can't be read or parsed is returned as its
// text, which is not a JSON object, so the tightening is refused and every job call with it
// (its `deny` can't be known: fail closed).
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { parseJson } from "../../kernel/json.js"
import { DEFAULT_TIGHTENING, isBlocking, mergeTightening, readTightening, type Tightening } from "../../yea/approval/index.js"

export const readPolicyFile = (path: string): Effect.Effect<unknown, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.either(fs.stat(path))
    if (info._tag === "Left") return info.left._tag === "SystemError" && info.left.reason === "NotFound" ? undefined : `unreadable: ${info.left.message}`
    const text = yield* Effect.either(fs.readFileString(path))
    if (text._tag === "Left") return `unreadable: ${text.left.message}`
    const parsed = parseJson(text.right)
    return parsed._tag === "Right" ? parsed.right : text.right
  })

/** The tightening in force: the options' with the file's, or why none can be known. */
export const effectiveTightening = (own: Tightening | undefined, file: unknown): { readonly ok: true; readonly value: Tightening } | { readonly ok: false; readonly why: string } => {
  const mine = own ?? DEFAULT_TIGHTENING
  if (file === undefined) return { ok: true, value: mine }
  const read = readTightening(file)
  const blocking = read.warnings.filter(isBlocking)
  if (blocking.length > 0) return { ok: false, why: `the policy file can't be used: ${blocking.join("; ")}` }
  return { ok: true, value: mergeTightening(mine, read) }
}
