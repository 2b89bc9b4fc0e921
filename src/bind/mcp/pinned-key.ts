// The pinned principal key (SPEC-mcp-ts `yea()` option `principal`, default `YEA_PRINCIPAL_PUB`;
// security.md "MCP servers built with the framework"): the server trusts the key in the file the
// variable names, so that file must be out of the agent's reach. An agent running as the server's
// OS user that could rewrite it would pin a key of its own and sign its own policy and consents.
//
// So the file is refused when: the server runs as root (root can write anything); a component of
// its path is a symbolic link (the link could be swapped); the file or any folder above it is
// owned by the server's user, or writable by it through its group or by everyone (a sticky
// world-writable folder such as /tmp is the exception: only an entry's owner may replace it);
// it is not a regular file, or over 4 KiB; or it does not hold one `ed25519:` key. A refused key
// is not an error of the server: it serves, but nothing runs on its own and no consent is accepted.
import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { isAbsolute, resolve, sep } from "node:path"
import { isKey } from "../../yea/keys.js"

/** Why a pinned key file is not used; each reason is one check above. */
export class PinnedKeyRefused extends Schema.TaggedError<PinnedKeyRefused>()("PinnedKeyRefused", {
  reason: Schema.Literal("pinned_key_root", "pinned_key_symlink", "pinned_key_owned", "pinned_key_writable", "pinned_key_unreadable", "pinned_key_invalid"),
  path: Schema.String,
  message: Schema.String
}) {}

/** Who the server runs as: its effective uid and groups (read by the composition root). */
export interface RunningAs {
  readonly uid: number
  readonly gids: ReadonlyArray<number>
}

const MAX_SIZE = 4096
const STICKY = 0o1000

const refuse = (reason: PinnedKeyRefused["reason"], path: string, message: string) => new PinnedKeyRefused({ reason, path, message })

/** Whether `who` may change the entry `info` describes (as its owner, or through group or other bits). */
const changeable = (info: FileSystem.File.Info, who: RunningAs): "owned" | "writable" | null => {
  const uid = Option.getOrUndefined(info.uid)
  const gid = Option.getOrUndefined(info.gid)
  if (uid === who.uid) return "owned"
  const sticky = info.type === "Directory" && (info.mode & STICKY) !== 0
  if ((info.mode & 0o002) !== 0 && !sticky) return "writable"
  if ((info.mode & 0o020) !== 0 && gid !== undefined && who.gids.includes(gid) && !sticky) return "writable"
  return null
}

/** The `ed25519:` key in the pinned file at `path`, after every check above. */
export const readPinnedKey = Effect.fn("yea.mcp.pinnedKey")(function* (path: string, who: RunningAs) {
  const fs = yield* FileSystem.FileSystem
  const abs = isAbsolute(path) ? path : resolve(path)
  if (who.uid === 0) return yield* Effect.fail(refuse("pinned_key_root", abs, "the server runs as root, which can write any file, so no key file is out of its reach"))
  // From the root down: no link, and nothing this user could change.
  const parts = abs.split(sep).filter((p) => p !== "")
  const chain = ["/", ...parts.map((_, i) => sep + parts.slice(0, i + 1).join(sep))]
  for (const at of chain) {
    const link = yield* Effect.orElseSucceed(Effect.as(fs.readLink(at), true), () => false)
    if (link) return yield* Effect.fail(refuse("pinned_key_symlink", at, "a symbolic link on the pinned key's path; it could be swapped"))
    const info = yield* Effect.mapError(fs.stat(at), (e) => refuse("pinned_key_unreadable", at, e.message))
    const can = changeable(info, who)
    if (can === "owned") return yield* Effect.fail(refuse("pinned_key_owned", at, "owned by the server's own user, who could rewrite the pinned key; keep it somewhere like /etc/yea/principal.pub, written with sudo"))
    if (can === "writable") return yield* Effect.fail(refuse("pinned_key_writable", at, `mode ${(info.mode & 0o7777).toString(8)} lets the server's user change it`))
    if (at === abs && info.type !== "File") return yield* Effect.fail(refuse("pinned_key_unreadable", at, "not a regular file"))
    if (at === abs && Number(info.size) > MAX_SIZE) return yield* Effect.fail(refuse("pinned_key_invalid", at, `over ${MAX_SIZE} bytes`))
  }
  const text = yield* Effect.mapError(fs.readFileString(abs), (e) => refuse("pinned_key_unreadable", abs, e.message))
  const key = text.trim()
  if (!isKey(key)) return yield* Effect.fail(refuse("pinned_key_invalid", abs, "the file does not hold one ed25519: key"))
  return key
})
