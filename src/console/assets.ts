// The page: src/console/web/main.ts bundled into one script (no network, no CDN). `npm run build`
// bundles it into dist/console/web/app.js, which the built library and the bin serve as it is (no
// bundler at run time: esbuild is a devDependency, absent from an installed package); run from the
// sources, the console bundles them on start instead, so a change to the page shows at once.
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

/** Whether this module runs from the sources (under a TypeScript loader) or from dist/. */
const fromSources = import.meta.url.endsWith(".ts")

/** The page from the sources, bundled by esbuild now: a clone's development run (tsx), where
 * esbuild, a devDependency, is installed. */
const bundleSources = Effect.gen(function*() {
  const entry = fileURLToPath(new URL("./web/main.ts", import.meta.url))
  // A specifier in a variable: the bin's own bundler (scripts/build-cli.mjs) leaves it to Node at
  // run time instead of bundling esbuild (a devDependency with a native binary) into the bin.
  const esbuildModule = "esbuild"
  const esbuild = yield* Effect.tryPromise({ try: () => import(esbuildModule) as Promise<typeof import("esbuild")>, catch: () => bundleFailed("esbuild is not installed (run from the sources, the console bundles its page with it: npm install --include=dev)") })
  const out = yield* Effect.tryPromise({
    try: () => esbuild.build({ entryPoints: [entry], bundle: true, write: false, format: "esm", platform: "browser", target: "es2020", minify: true, logLevel: "silent" }),
    catch: (e) => bundleFailed(String(e))
  })
  const js = out.outputFiles[0]?.text
  if (js === undefined) return yield* Effect.fail(bundleFailed("esbuild produced no output"))
  return js
})

/** The page `npm run build` bundled (scripts/build-cli.mjs): dist/console/web/app.js, beside the
 * library's dist/console/ or, from the bin's chunks in dist/bin/, one folder up. Read, never built:
 * an installed package has no bundler. */
const readBuilt = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const candidates = ["./web/app.js", "../console/web/app.js"].map((p) => fileURLToPath(new URL(p, import.meta.url)))
  for (const c of candidates) {
    if (yield* fs.exists(c).pipe(Effect.orElseSucceed(() => false))) {
      return yield* fs.readFileString(c).pipe(Effect.mapError((e) => consoleError("console/not_built", `the built page cannot be read: ${e.message}`, c)))
    }
  }
  return yield* Effect.fail(consoleError("console/not_built", "the console page is not built; run `npm run build`", candidates[0]))
})

/** ConsoleAssets: the page bundled at build time (dist/), or bundled from the sources on start
 * when run from them. Built once, when the Layer is built, and kept in memory. */
export const bundledAssets: Layer.Layer<ConsoleAssets, ConsoleError, FileSystem.FileSystem> = Layer.effect(ConsoleAssets, Effect.gen(function*() {
  const js = fromSources ? yield* bundleSources : yield* readBuilt
  return { html, js, css }
}).pipe(Effect.withSpan("console.assets")))
