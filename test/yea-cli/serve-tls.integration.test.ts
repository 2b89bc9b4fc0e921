// `mandate yea serve --tls-cert --tls-key` serves yeas:// (SPEC §2.3; security.md: run YEA over
// TLS so frames can't be rewritten in transit): `do --ca` reaches it, a client that does not
// trust the certificate is refused, and half a TLS pair is a usage error. A self-signed
// certificate for 127.0.0.1 made with openssl in a temp folder; the server is a child process.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli, spawnMandate } from "../support/cli.js"

const certDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "yeas-cli-"))
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "k.pem", "-out", "c.pem", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { cwd: dir, stdio: "pipe" })
  return dir
}

describe("mandate yea serve over TLS", () => {
  it.live("serves yeas://; do --ca answers HELLO, do without it is refused; half a pair is refused", () =>
    Effect.gen(function* () {
      const dir = certDir()
      const home = mkdtempSync(join(tmpdir(), "yeas-home-"))
      const env = { NO_COLOR: "1", HOME: home, MANDATE_HOME: join(home, "agent") }
      const url = yield* Effect.acquireRelease(
        Effect.sync(() => spawnMandate(["yea", "serve", "shop", "--port", "0", "--tls-cert", join(dir, "c.pem"), "--tls-key", join(dir, "k.pem")])),
        (child) => Effect.sync(() => child.kill())
      ).pipe(
        Effect.flatMap((child) =>
          Effect.async<string, Error>((resume) => {
            let err = ""
            child.stderr!.on("data", (c: Buffer) => {
              err += c.toString()
              const m = /serving \S+ at (yeas:\/\/\S+)/.exec(err)
              if (m) resume(Effect.succeed(m[1]))
            })
            child.on("exit", () => resume(Effect.fail(new Error(`the server exited: ${err}`))))
          })
        )
      )
      const ok = yield* Effect.promise(() => runCli(["yea", "do", url, "HELLO", "--ca", join(dir, "c.pem")], { env }))
      expect(ok.status).toBe(0)
      expect(ok.stdout).toContain("shop.search")
      const untrusted = yield* Effect.promise(() => runCli(["yea", "do", url, "HELLO"], { env }))
      expect(untrusted.status).toBe(1)
      const half = yield* Effect.promise(() => runCli(["yea", "serve", "shop", "--tls-cert", join(dir, "c.pem")], { env }))
      expect(half.stderr).toMatch(/^error: mandate\/usage at mandate yea serve: --tls-cert and --tls-key go together/m)
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
