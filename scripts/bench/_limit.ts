// What the executor benchmarks share: their integer flags, and the baseline they compare with, one
// Ed25519 verify plus one sign (node:crypto through the kernel) per second, the least a new call
// costs (the call's signature checked, its tally signed).
import { signerFromSeed, verify } from "../../src/kernel/ed25519.js"

export const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  const v = i >= 0 ? Number(args[i + 1]) : dflt
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`--${name} takes a positive integer`)
  return v
}

export const ed25519Limit = (sample: Uint8Array, ms = 1500): number => {
  const s = signerFromSeed(new Uint8Array(32).fill(9))
  const sig = s.sign(sample)
  let n = 0
  const t0 = performance.now()
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 50; i++) {
      if (!verify(s.publicKey, sample, sig)) throw new Error("baseline verify failed")
      s.sign(sample)
    }
    n += 50
  }
  return n / ((performance.now() - t0) / 1000)
}
