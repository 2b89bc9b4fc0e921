// Locates the shared reference corpora (../shared beside the repository). Tests read them in
// place and skip, with a printed notice, where ../shared is absent (brief: never copy them in).
import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
export const sharedDir = resolve(repoRoot, "..", "shared")

/** Absolute path of a folder or file under ../shared, or undefined (with a notice) when absent. */
export const sharedPath = (...parts: ReadonlyArray<string>): string | undefined => {
  const p = join(sharedDir, ...parts)
  if (existsSync(p)) return p
  console.warn(`[notice] ${p} is absent: the tests that read it are skipped`)
  return undefined
}
