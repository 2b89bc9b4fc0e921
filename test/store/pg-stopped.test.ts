// On PostgreSQL, a server that stops mid-run makes the step's COMMIT fail, and that
// is the typed StoreError, never a defect. The shared server on 127.0.0.1:5432 is never touched: the
// test runs a throwaway cluster of its own (initdb in a temporary folder as the `postgres` OS user,
// on a free port), stops it mid-step with `pg_ctl stop -m immediate`, starts it again and removes it.
// Skipped with a notice when initdb or the `postgres` user is unavailable. Every step is bounded.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Atomic, Reservations } from "../../src/accounting/reservations.js"
import * as PgStore from "../../src/store/postgres/client.js"
import * as PgReservations from "../../src/store/postgres/reservations.js"
import { expectStoreError } from "./support.js"

const bin = (() => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const found = readdirSync(root).map((v) => join(root, v, "bin")).find((b) => existsSync(join(b, "initdb")))
  return found
})()

const pgUser = (() => {
  const r = spawnSync("id", ["-u", "postgres"], { encoding: "utf8", timeout: 5_000 })
  return r.status === 0 ? { uid: Number(r.stdout.trim()), gid: Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim()) } : undefined
})()

const asPostgres = (args: ReadonlyArray<string>, timeout: number) =>
  spawnSync("runuser", ["-u", "postgres", "--", ...args], { encoding: "utf8", timeout })

const freePort = Effect.async<number>((resume) => {
  const s = createServer()
  s.listen(0, "127.0.0.1", () => {
    const port = (s.address() as { port: number }).port
    s.close(() => resume(Effect.succeed(port)))
  })
})

interface Cluster {
  readonly url: string
  readonly stop: () => void
  readonly start: () => void
}

/** A throwaway cluster for this test, removed when the scope closes. Fails when it cannot be made. */
const cluster = Effect.acquireRelease(
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "mandate-pg-stopped-"))
    chownSync(dir, pgUser!.uid, pgUser!.gid)
    const data = join(dir, "data")
    const init = asPostgres([join(bin!, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"], 90_000)
    if (init.status !== 0) return yield* Effect.dieMessage(`initdb failed: ${init.stderr}`)
    const port = yield* freePort
    const pgCtl = (...args: ReadonlyArray<string>) => asPostgres([join(bin!, "pg_ctl"), "-D", data, ...args], 60_000)
    const start = () => {
      const r = pgCtl("-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-l", join(dir, "log"), "-w", "-t", "50", "start")
      if (r.status !== 0) throw new Error(`pg_ctl start failed: ${r.stderr}`)
    }
    const stop = () => void pgCtl("-m", "immediate", "-w", "-t", "30", "stop")
    start()
    return { dir, url: `postgres://postgres@127.0.0.1:${port}/postgres`, start, stop }
  }),
  (c) =>
    Effect.sync(() => {
      c.stop()
      rmSync(c.dir, { recursive: true, force: true })
    })
)

const usable = bin !== undefined && pgUser !== undefined &&
  spawnSync("runuser", ["--help"], { stdio: "ignore", timeout: 5_000 }).status === 0
if (!usable) console.warn("[notice] initdb or the postgres user is unavailable: the stopped-PostgreSQL test is skipped")

const reserve = (id: string) =>
  Effect.flatMap(Reservations, (r) => r.reserve({ id, limits: [{ key: "k", limit: 1000n, amount: 1n }], onFailure: "consume" }))


describe("a failed commit is a typed StoreError (PostgreSQL stopped mid-run)", () => {
  it.scopedLive.skipIf(!usable)("the step's commit fails typed while the server is down; nothing kept; works after a restart", () =>
    Effect.gen(function*() {
      const pg: Cluster = yield* cluster
      const ctx = yield* Layer.build(PgReservations.layer.pipe(
        Layer.provideMerge(PgStore.layer({ url: pg.url, schema: "stopped", maxConnections: 2, connectTimeoutMs: 3_000 }))
      ))
      yield* Effect.provide(reserve("before"), ctx)
      const atomic = yield* Effect.provide(Atomic, ctx)
      const exit = yield* Effect.exit(atomic.transaction(Effect.gen(function*() {
        yield* reserve("in-step")
        yield* Effect.sync(pg.stop)
        return "done"
      })).pipe(Effect.provide(ctx)))
      const e = expectStoreError(exit)
      expect(e.operation).toBe("postgres.commit")
      expect(e.store).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/postgres schema stopped$/)
      // While the server is down every step fails typed.
      expectStoreError(yield* Effect.exit(Effect.provide(reserve("while-down"), ctx)))
      yield* Effect.sync(pg.start)
      const r = yield* Effect.provide(Reservations, ctx)
      expect(yield* r.get("in-step")).toEqual(Option.none())
      expect(yield* r.get("while-down")).toEqual(Option.none())
      expect((yield* Effect.provide(reserve("after"), ctx)).state).toBe("held")
      expect(yield* r.used("k")).toBe(2n)
    }))
})
