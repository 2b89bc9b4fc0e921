// Making a store file read-only under a running store, to cause a real COMMIT failure: the
// immutable attribute (chattr +i) refuses writes even to root, which a mode change does not.
import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"

/** Sets or clears the immutable attribute; false when the file system or the user cannot. */
export const chattr = (flag: "+i" | "-i", paths: ReadonlyArray<string>): boolean =>
  spawnSync("chattr", [flag, ...paths], { stdio: "ignore", timeout: 10_000 }).status === 0

/** Whether chattr works on files in `dir`; if not, prints that `skipped` are skipped. */
export const immutableSupported = (dir: string, skipped: string): boolean => {
  const probe = join(dir, "probe")
  writeFileSync(probe, "")
  const ok = chattr("+i", [probe]) && chattr("-i", [probe])
  if (!ok) console.warn(`[notice] chattr +i is unavailable here: ${skipped} skipped`)
  return ok
}
