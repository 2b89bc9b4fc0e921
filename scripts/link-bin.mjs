// npm links the bins of dependencies into node_modules/.bin but not the project's own, so
// `npx mandate ...` inside a fresh clone would find nothing. Run by `prepare` (after the build), so
// only in a clone: an installed package gets its bin linked by npm itself.
import { chmodSync, mkdirSync, rmSync, symlinkSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const binDir = join(root, "node_modules", ".bin")
const target = join(root, "scripts", "mandate.mjs")
mkdirSync(binDir, { recursive: true })
const link = join(binDir, "mandate")
rmSync(link, { force: true })
symlinkSync(relative(binDir, target), link)
chmodSync(target, 0o755)
