import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import LongestFirst from "./support/sequencer.js"

// Three projects, chosen by file name alone (the first rule that matches a file wins):
//
// - e2e: the product as a user gets it, slow and whole: the packed tarball installed (test/package),
//   a browser driving the console (`*.browser.test.ts`), the demos run end to end (test/demo,
//   test/yea-demo, `demos.test.ts`, `serve-ledger.test.ts`), and any `*.e2e.test.ts`.
// - integration: real processes and real stores: PostgreSQL and on-disk stores (test/store*,
//   `*postgres*`, `*concurrency*`, `workers`, `reserve-step`), processes killed or crashed
//   (`*kill*`, `crash`, `startup`), the CLI started as a server or at a pseudo-terminal (the
//   `INTEGRATION_FILES` below: files that spawn `mandate ... serve`, an MCP server, bridge or proxy,
//   or several processes sharing one store), the
//   docs' TypeScript examples run as programs, the benchmarks, and any `*.integration.test.ts`.
// - unit: everything else: pure and in-process tests, CLI commands run in process through the
//   CLI's run function (test/support/cli.ts `runCli`). `npm test` runs this project only.
//
// A new test file lands in unit unless its name says otherwise: name a file that starts a process,
// needs PostgreSQL or listens for another process `*.integration.test.ts`, and one that builds the
// package, a browser or a demo `*.e2e.test.ts`.
const E2E = [
  "test/package/**/*.test.ts",
  "test/**/*.browser.test.ts",
  "test/demo/**/*.test.ts",
  "test/yea-demo/**/*.test.ts",
  "test/**/demos.test.ts",
  "test/**/serve-ledger.test.ts",
  "test/**/*.e2e.test.ts"
]

const INTEGRATION_FILES = [
  "test/accounting/sqlite.test.ts",
  "test/bind-writ-http/serve.test.ts",
  "test/cli-writ/cli.test.ts",
  "test/writ-executor/cli.test.ts",
  "test/writ-executor/scenarios.test.ts",
  "test/writ-gate/cli.test.ts",
  "test/writ-mcp/cli.test.ts",
  "test/writ-mcp/proxy-*.test.ts",
  "test/yea-cli/do.test.ts",
  "test/yea-cli/serve.test.ts",
  "test/yea-cli/keys.test.ts",
  "test/yea-mcp/approve-cli.test.ts",
  "test/yea-mcp/bridge.test.ts",
  "test/yea-mcp/flows.test.ts",
  "test/yea-mcp/inspector.test.ts",
  "test/yea-openapi/cli.test.ts",
  "test/yea-transports/hostile.test.ts"
]

const INTEGRATION = [
  "test/store/**/*.test.ts",
  "test/store-*/**/*.test.ts",
  "test/bench/**/*.test.ts",
  "test/**/*postgres*.test.ts",
  "test/**/*concurrency*.test.ts",
  "test/**/workers.test.ts",
  "test/**/reserve-step.test.ts",
  "test/**/*kill*.test.ts",
  "test/**/crash.test.ts",
  "test/**/startup.test.ts",
  "test/**/*.integration.test.ts",
  ...INTEGRATION_FILES
]

export default defineConfig({
  // The repository root (this file lives in test/ so the top level stays as the design card says).
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two workers (the machine's two cores): files share no port, folder, schema or global.
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
    // The longest files start first (test/support/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // integration starts the CLI as a process from the bundled dist/bin (test/support/bin-setup.ts); e2e from the sources,
    // and runs the demo once for the tests that read what it leaves (test/support/demo-run.ts).
    projects: [
      // One pool for the three projects (no groupOrder): files of every project start longest first
      // (test/support/sequencer.ts), so no project ends with one file running while the other core
      // waits for the next project to begin, as it did when each project ran after the one before.
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...E2E, ...INTEGRATION] } },
      { extends: true, test: { name: "integration", include: INTEGRATION, exclude: E2E, globalSetup: ["./test/support/bin-setup.ts"] } },
      { extends: true, test: { name: "e2e", include: E2E, globalSetup: ["./test/support/demo-setup.ts"] } }
    ]
  }
})
