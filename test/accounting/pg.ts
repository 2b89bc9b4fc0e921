// PostgreSQL availability and a unique schema per test file run.
import { createConnection } from "node:net"
import { randomUUID } from "node:crypto"

/** Whether 127.0.0.1:5432 accepts connections; prints a notice when it does not. */
export const pgReachable = (): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port: 5432 })
    const done = (ok: boolean) => {
      s.destroy()
      if (!ok) console.warn("[notice] PostgreSQL at 127.0.0.1:5432 is unreachable: the PostgreSQL tests are skipped")
      resolve(ok)
    }
    s.setTimeout(1000, () => done(false))
    s.once("connect", () => done(true))
    s.once("error", () => done(false))
  })

export const uniqueSchema = (label: string): string => `t_${label}_${randomUUID().replace(/-/g, "").slice(0, 12)}`
