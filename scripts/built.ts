// Whether dist/ (the package's compiled library and bundled CLI) is current: missing, or older
// than anything it is built from, means `npm run build` must run before dist/ is used. Shared by
// the install test and the cli benchmark, the two things that run dist/ rather than the sources.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const newest = (dir: string): number => {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return t
}

/** What the build writes last (scripts/build-cli.mjs runs after tsc). */
export const builtMark = (root: string): string => join(root, "dist", "bin", "main.js")

export const isStale = (root: string): boolean => {
  const mark = builtMark(root)
  if (!existsSync(mark) || !existsSync(join(root, "dist", "index.js"))) return true
  const inputs = Math.max(
    newest(join(root, "src")),
    ...["package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build-cli.mjs"].map((f) => statSync(join(root, f)).mtimeMs)
  )
  return inputs > statSync(mark).mtimeMs
}
