// How the command line starts itself again as a child process (the demo's executors, the YEA
// demo's stdio services), and where its example modules are. A child is started through the entry
// point running now: node, node's own flags (tsx's loader when run from the sources) and the
// script, so that a clone's `npm start` (tsx, src/cli/main.ts), the built bin
// (scripts/mandate.mjs, then dist/bin/main.js) and an installed package each start their own kind
// of child, and nothing outside the running package (a source tree, a loader) is assumed.
import { basename } from "node:path"
import { fileURLToPath } from "node:url"

/** The names the command line's entry points have: the bin (and npm's link to it), the launcher,
 * the source entry and the bundled one. */
const entryNames = /^(mandate|mandate\.mjs|main\.ts|main\.js)$/

/** Whether this module runs from the sources (under a TypeScript loader) or from the bundle. */
const fromSources = import.meta.url.endsWith(".ts")

/** `[node, ...args]` starting `mandate` again; the caller appends the command and its options.
 * When this process was not started as `mandate` (the CLI run inside another program, a test
 * runner for one), the entry beside this module is used: src/cli/main.ts through tsx, or the
 * bundle's dist/bin/main.js (the bundle's chunks sit beside its entry). */
export const selfCommand = (): ReadonlyArray<string> => {
  const entry = process.argv[1]
  if (entry !== undefined && entryNames.test(basename(entry))) return [process.execPath, ...process.execArgv, entry]
  const beside = fileURLToPath(new URL(fromSources ? "./main.ts" : "./main.js", import.meta.url))
  return fromSources ? [process.execPath, "--import", "tsx", beside] : [process.execPath, beside]
}

/** An example module of src/examples (`payment`, `booking`): the source beside src/cli when run
 * from the sources, else the JavaScript `npm run build` compiled into dist/examples, beside
 * dist/bin. */
export const exampleModule = (name: string): string =>
  fileURLToPath(new URL(`../examples/${name}.${fromSources ? "ts" : "js"}`, import.meta.url))
