// Which processes of this host are alive: what a SQLite file's sharers (always on one host, as
// SQLite's locking requires) tell each other besides their leases. A `writ serve` killed with
// SIGKILL cannot end its lease; its successor, restarted at once, would otherwise wait a whole
// lease period before recovering its pending calls (section 9). A record whose owner ran on this
// host under a pid that no longer exists is that of a process that is gone, whatever its lease
// says. A pid reused since only makes the owner look alive: recovery then waits for the lease.
import { Context, Effect, Layer } from "effect"
import { hostname } from "node:os"

export interface LocalProcessesService {
  /** This host's name, as recorded beside each owner. */
  readonly host: string
  /** This process's id. */
  readonly pid: number
  /** Whether a process with `pid` exists on this host now. */
  readonly alive: (pid: number) => boolean
}

export class LocalProcesses extends Context.Tag("mandate/store/sqlite/LocalProcesses")<LocalProcesses, LocalProcessesService>() {}

/** The operating system's answer: signal 0 probes a pid without touching it (EPERM: it exists). */
export const live: LocalProcessesService = {
  host: hostname(),
  pid: process.pid,
  alive: (pid) => {
    try {
      process.kill(pid, 0)
      return true
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "EPERM"
    }
  }
}

export const layer: Layer.Layer<LocalProcesses> = Layer.succeed(LocalProcesses, live)

/** The service in context, else the operating system's. */
export const fromContext: Effect.Effect<LocalProcessesService> = Effect.map(
  Effect.serviceOption(LocalProcesses),
  (o) => (o._tag === "Some" ? o.value : live)
)
