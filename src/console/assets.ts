// The page, bundled on start: src/console/web/main.ts (or the compiled main.js beside it in dist/)
// through esbuild into one script, with no network and no CDN (esbuild is a devDependency: where it
// is missing the console says so with `console/bundle_failed`). The bundle is built once, when the
// Layer is built, and kept in memory; the files it reads are the page's own source, nothing else.
import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import { consoleError, type ConsoleError } from "./reason.js"
import { css } from "./style.js"

export interface ConsoleAssetsShape {
  readonly html: string
  readonly js: string
  readonly css: string
}

export class ConsoleAssets extends Context.Tag("mandate/console/ConsoleAssets")<ConsoleAssets, ConsoleAssetsShape>() {}

export const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Mandate console</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<div id="app"><p>Loading the console…</p></div>
<noscript>The console's views are drawn by a script bundled with it; enable scripts for this page.</noscript>
<script type="module" src="/assets/app.js"></script>
</body>
</html>
`

const bundleFailed = (detail: string) => consoleError("console/bundle_failed", detail.slice(0, 300), "src/console/web/main.ts")

/** ConsoleAssets with the page bundled by esbuild. */
export const bundledAssets: Layer.Layer<ConsoleAssets, ConsoleError, FileSystem.FileSystem> = Layer.effect(ConsoleAssets, Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  // Beside this module in src/ (main.ts) or dist/console/ (tsc's main.js); from the bundled bin in
  // dist/bin/, the library's compiled copy in dist/console/web/.
  const candidates = ["./web/main.ts", "./web/main.js", "../console/web/main.js"].map((p) => fileURLToPath(new URL(p, import.meta.url)))
  let entry: string | undefined
  for (const c of candidates) if (entry === undefined && (yield* fs.exists(c).pipe(Effect.orElseSucceed(() => false)))) entry = c
  if (entry === undefined) return yield* Effect.fail(bundleFailed("the page source is not beside the console"))
  // A specifier in a variable: the bin's own bundler (scripts/build-cli.mjs) leaves it to Node at
  // run time instead of bundling esbuild (a devDependency with a native binary) into the bin.
  const esbuildModule = "esbuild"
  const esbuild = yield* Effect.tryPromise({ try: () => import(esbuildModule) as Promise<typeof import("esbuild")>, catch: () => bundleFailed("esbuild is not installed (it is a devDependency: npm install --include=dev)") })
  const out = yield* Effect.tryPromise({
    try: () => esbuild.build({ entryPoints: [entry!], bundle: true, write: false, format: "esm", platform: "browser", target: "es2020", minify: true, logLevel: "silent" }),
    catch: (e) => bundleFailed(String(e))
  })
  const js = out.outputFiles[0]?.text
  if (js === undefined) return yield* Effect.fail(bundleFailed("esbuild produced no output"))
  return { html, js, css }
}).pipe(Effect.withSpan("console.bundle")))
