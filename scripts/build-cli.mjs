// The `mandate` bin, bundled (and the console's page, below): src/cli/main.ts and what it imports (Effect included) into ESM
// chunks under dist/bin/, one per command module, loaded only when its command runs (tree.ts).
// One bundled, tree-shaken file starts several times faster than Node resolving and loading the
// hundreds of modules `effect` and `@effect/*` are published as (see `npm run bench -- cli`).
// The library (`exports`) is tsc's output in dist/ instead, so that it shares its dependencies
// (one `effect`) with the application that imports it.
import { build } from "esbuild"
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
// `node build-cli.mjs DIR` bundles it into DIR instead (the test suite runs dist/bin itself, test/support/bin-setup.ts).
const target = process.argv[2] ?? join(root, "dist", "bin")
// Bundled beside the target and swapped in at the end, never deleted first: a test file running
// the bin (test/docs/blocks.e2e.test.ts) while another rebuilds dist/ found dist/bin/main.js gone
// for the seconds the bundle took (mandate/not_built). The staging folder sits at the same depth,
// so the chunks' relative imports and the source maps' paths hold after the rename.
const outdir = `${target}.next`
rmSync(outdir, { recursive: true, force: true })
// The console's page (src/console/web) as one browser script, which the console serves as it is:
// an installed package has no bundler (esbuild is a devDependency), so it is bundled here.
await build({
  entryPoints: [join(root, "src", "console", "web", "main.ts")],
  outfile: join(root, "dist", "console", "web", "app.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2020",
  minify: true,
  logLevel: "warning"
})
// The plain-JavaScript examples, shipped beside the compiled ones (tsc compiles only TypeScript).
mkdirSync(join(root, "dist", "examples"), { recursive: true })
copyFileSync(join(root, "src", "examples", "ledger-budget.mjs"), join(root, "dist", "examples", "ledger-budget.mjs"))
const result = await build({
  entryPoints: { main: join(root, "src", "cli", "main.ts") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  // A native addon: loaded from node_modules, and only by the commands that open a SQLite store.
  external: ["better-sqlite3"],
  // Bundled CommonJS dependencies call `require` for Node's own modules.
  banner: { js: "import{createRequire as __mandateRequire}from\"node:module\";const require=__mandateRequire(import.meta.url);" },
  metafile: true,
  logLevel: "warning"
})
// Which sources each chunk holds and what it imports: test/package checks from it that a command
// loads only its own modules. Not shipped (package.json `files`).
writeFileSync(join(outdir, "meta.json"), JSON.stringify(result.metafile))
const old = `${target}.old`
rmSync(old, { recursive: true, force: true })
if (existsSync(target)) renameSync(target, old)
renameSync(outdir, target)
rmSync(old, { recursive: true, force: true })
