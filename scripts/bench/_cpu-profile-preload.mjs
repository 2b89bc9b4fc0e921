// Preloaded (`NODE_OPTIONS=--import <this file>`, as --cpu-prof is not allowed there) by
// _executor-profile.ts: starts the V8 CPU profiler in the process, and on SIGUSR2 writes the
// profile to $MANDATE_CPU_PROFILE (then the process may be killed).
import { Session } from "node:inspector"
import { writeFileSync } from "node:fs"

const session = new Session()
session.connect()
session.post("Profiler.enable", () => session.post("Profiler.start"))
process.on("SIGUSR2", () => {
  session.post("Profiler.stop", (err, r) => {
    writeFileSync(process.env.MANDATE_CPU_PROFILE ?? "executor.cpuprofile", err ? "{}" : JSON.stringify(r.profile))
  })
})
