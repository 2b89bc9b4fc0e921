// The demo's executor processes: each is `mandate writ serve`, started through the entry point
// running the demo (self.ts: the bin, or the sources under tsx), on a free loopback port with its own key, SQLite store and handler module. A
// process is acquired in a Scope and killed when the scope closes, on every exit path (success,
// a failed expectation, an error, an interrupt such as Ctrl-C); a process-exit hook kills any
// still running if the runtime itself is torn down.
import { Data, Deferred, Duration, Effect, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { selfCommand } from "../self.js"

export class DemoProcessError extends Data.TaggedError("DemoProcessError")<{ readonly message: string }> {}

const live = new Set<ChildProcess>()
let hooked = false
const hookExit = () => {
  if (hooked) return
  hooked = true
  process.on("exit", () => {
    for (const p of live) if (p.exitCode === null) p.kill("SIGKILL")
  })
}

export interface Executor {
  readonly name: string
  readonly url: string
  readonly did: string
  readonly pid: number
  /** stderr seen so far (for a failure report). */
  readonly stderr: () => string
}

export interface ServeArgs {
  readonly name: string
  readonly key: string
  readonly store: string
  readonly handler: string
  readonly roots: ReadonlyArray<string>
  readonly forward?: Readonly<Record<string, string>>
  readonly act?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  /** A fixed port (default 0: any free port, read back from the ready line). */
  readonly port?: number
  /** A decision ledger (absolute path) receiving the executor's decisions. */
  readonly ledger?: string
}

/** Starts one executor and waits for its ready line `{"url","did","resolved"}`. */
export const startExecutor = (a: ServeArgs): Effect.Effect<Executor, DemoProcessError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      hookExit()
      const [node, ...self] = selfCommand()
      const args = [
        ...self, "writ", "serve",
        "--port", String(a.port ?? 0), "--host", "127.0.0.1", "--store", a.store, "--key", a.key, "--handler", a.handler,
        ...a.roots.flatMap((r) => ["--root", r]),
        ...Object.entries(a.forward ?? {}).flatMap(([did, url]) => ["--forward", `${did}=${url}`]),
        ...(a.act ?? []).flatMap((p) => ["--act", p]),
        ...(a.ledger === undefined ? [] : ["--ledger", a.ledger])
      ]
      const child = spawn(node!, args, {
        env: { ...process.env, NO_COLOR: "1", ...(a.env ?? {}) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      live.add(child)
      child.on("exit", () => live.delete(child))
      let err = ""
      child.stderr!.on("data", (d: Buffer) => { err += d.toString() })
      const ready = yield* Deferred.make<{ url: string; did: string }, DemoProcessError>()
      let out = ""
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString()
        let nl: number
        while ((nl = out.indexOf("\n")) >= 0) {
          const line = out.slice(0, nl).trim()
          out = out.slice(nl + 1)
          if (!line.startsWith("{")) continue
          try {
            const j = JSON.parse(line) as { url?: string; did?: string }
            if (typeof j.url === "string" && typeof j.did === "string") Deferred.unsafeDone(ready, Effect.succeed({ url: j.url, did: j.did }))
          } catch {
            // not the ready line
          }
        }
      })
      child.on("exit", (code) =>
        Deferred.unsafeDone(ready, Effect.fail(new DemoProcessError({ message: `${a.name} exited (${code}) before it was ready: ${err.trim().split("\n").slice(-3).join(" | ")}` }))))
      const r = yield* Deferred.await(ready).pipe(
        Effect.timeoutFail({ duration: Duration.seconds(60), onTimeout: () => new DemoProcessError({ message: `${a.name} not ready after 60 s` }) }),
        Effect.tapError(() => Effect.sync(() => child.kill("SIGKILL")))
      )
      return { name: a.name, url: r.url, did: r.did, pid: child.pid ?? -1, stderr: () => err, child }
    }),
    (e) => stop(e.child)
  ).pipe(Effect.map(({ child: _c, ...e }) => e))

/** SIGTERM, then SIGKILL if it has not exited within two seconds. */
const stop = (child: ChildProcess): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const t = setTimeout(() => child.kill("SIGKILL"), 2000)
    child.once("exit", () => {
      clearTimeout(t)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })
