// What the executor benchmarks share: their integer flags, and the baseline they compare with, one
// Ed25519 verify plus one sign (node:crypto through the kernel) per second, the least a new call
// costs (the call's signature checked, its tally signed).
import { readFileSync } from "node:fs"
import { signerFromSeed, verify } from "../../src/kernel/ed25519.js"

/** CPU seconds (user + system) of one process so far, from /proc/<pid>/stat. */
export const cpuOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
}

export const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  const v = i >= 0 ? Number(args[i + 1]) : dflt
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`--${name} takes a positive integer`)
  return v
}

/** The limit per second, and the CPU (user + system, this process) one verify plus one sign took, in µs. */
export const ed25519Measure = (sample: Uint8Array, ms = 1500): { readonly rate: number; readonly cpuMicros: number } => {
  const s = signerFromSeed(new Uint8Array(32).fill(9))
  const sig = s.sign(sample)
  let n = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 50; i++) {
      if (!verify(s.publicKey, sample, sig)) throw new Error("baseline verify failed")
      s.sign(sample)
    }
    n += 50
  }
  const rate = n / ((performance.now() - t0) / 1000)
  const cpu = process.cpuUsage(cpu0)
  return { rate, cpuMicros: (cpu.user + cpu.system) / n }
}

export const ed25519Limit = (sample: Uint8Array, ms = 1500): number => ed25519Measure(sample, ms).rate
