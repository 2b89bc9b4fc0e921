// `npm run bench -- hostile [--seconds S] [--count N] [--concurrency C]`: hostile floods against
// a real `writ serve` (its own process, real listener, real SQLite store), each bounded in count
// and time. For each flood it measures, beside baselines from the same run:
//   - a well-formed call's latency (median and p99) against its idle median (target: within 5x);
//   - the server's resident memory, sampled every 100 ms (target: under 400 MB);
//   - audit bytes written per flood request (section 9.3: what an unauthenticated peer can make
//     the executor store), read from the store's audit table.
// The floods: long did:keys (tens of thousands of base58 characters in a call's `from` and a
// revoke's `iss`), distinct bogus keys, junk revokes from the victim's own address (while the
// victim's genuine revokes are counted as accepted or refused), slow and idle clients (headers a
// byte at a time, slow bodies, silent connections), and calls with an oversized `op`.
// The last line is `hostile: worst latency R (x idle) rss N MB`, R the worst flood median over the
// idle median.
import Database from "better-sqlite3"
import { readFileSync } from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import { join } from "node:path"
import { encodeCanonical } from "../../src/kernel/canonical.js"
import { didKeyFromPublicKey } from "../../src/kernel/didkey.js"
import type { JsonObject } from "../../src/kernel/json.js"
import {
  call, identity, key, nonce, postRaw, prefix, prng, revoke, spawnServe, tempDir, writ, writeKeyFile
} from "../../test/bind-writ-http/support.js"

const flag = (args: ReadonlyArray<string>, name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`)
  const v = i >= 0 ? Number(args[i + 1]) : dflt
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} takes a positive number`)
  return v
}

const rand = prng(0x405711e)
const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const longDidKey = (chars: number) => {
  let s = "did:key:z6Mk"
  for (let i = 0; i < chars; i++) s += B58[Math.floor(rand() * 58)]
  return s
}
const bogusKey = () => didKeyFromPublicKey(Uint8Array.from({ length: 32 }, () => Math.floor(rand() * 256)))
const junkSig = () => Buffer.from(Uint8Array.from({ length: 64 }, () => Math.floor(rand() * 256))).toString("base64url")
const bytes = (o: JsonObject) => Buffer.from(encodeCanonical(o, "utf16"))

const median = (xs: ReadonlyArray<number>) => quantile(xs, 0.5)
const quantile = (xs: ReadonlyArray<number>, q: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const withTimeout = <A>(p: Promise<A>, ms: number): Promise<A | "timeout"> =>
  Promise.race([p, sleep(ms).then(() => "timeout" as const)])

export const run = async (args: ReadonlyArray<string>) => {
  const seconds = flag(args, "seconds", 6)
  const count = flag(args, "count", 1500)
  const concurrency = flag(args, "concurrency", 16)
  const root = key(241) // the victim: an accepted root, and the principal of the probe calls
  const exec = key(242)
  const dir = tempDir("hostile")
  const store = join(dir, "executor.db")
  const limits = ["--header-timeout-ms", "2000", "--body-timeout-ms", "2000", "--idle-timeout-ms", "2000", "--max-connections", "512"]
  const server = await spawnServe(["--port", "0", "--store", store, "--key", writeKeyFile(dir, exec), "--root", root.did, ...limits])
  const url = new URL(server.url)
  const pid = server.child.pid ?? 0
  const rssMb = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
      return m === null ? NaN : Number(m[1]) / 1024
    } catch {
      return NaN
    }
  }
  const db = new Database(store, { readonly: true, fileMustExist: true })
  const lastSeq = () => (db.prepare("SELECT coalesce(max(seq), 0) AS s FROM writ_audit").get() as { s: number }).s
  /** Audit bytes since `seq`, leaving out the probes' and the victim's own entries. */
  const excluded = new Set<string>()
  const auditSince = (seq: number) => {
    let n = 0
    let b = 0
    for (const r of db.prepare("SELECT entry FROM writ_audit WHERE seq > ?").iterate(seq) as Iterable<{ entry: string }>) {
      const e = JSON.parse(r.entry) as { identity: string | null }
      if (e.identity !== null && excluded.has(e.identity)) continue
      n++
      b += Buffer.byteLength(r.entry)
    }
    return { rows: n, bytes: b }
  }

  // The probe: a well-formed call under the victim's writ, one at a time on a kept-alive socket.
  const probeAgent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  const probeChain = [writ(root, exec, { act: prefix("b/") })]
  let probeFailures = 0
  const probeOnce = async (): Promise<number> => {
    const c = call(root, probeChain, "b/probe", {}, nonce(0xb0b))
    excluded.add(identity(c))
    const t0 = performance.now()
    const a = await withTimeout(postRaw(probeAgent, url, bytes(c)).catch(() => "error" as const), 30_000)
    const dt = performance.now() - t0
    if (a === "timeout" || a === "error" || a.status !== 200) probeFailures++
    return dt
  }
  const probeWhile = async (running: () => boolean, max: number) => {
    const xs: Array<number> = []
    while (running() && xs.length < max) {
      xs.push(await probeOnce())
      await sleep(10)
    }
    return xs
  }

  // Idle baseline.
  for (let i = 0; i < 20; i++) await probeOnce() // warm-up
  const idleSeq = lastSeq()
  const idle = await probeWhile(() => true, 150)
  const idleMedian = median(idle)
  const idleRss = rssMb()
  const idleAudit = db.prepare("SELECT count(*) AS n, coalesce(sum(length(entry)), 0) AS b FROM writ_audit WHERE seq > ?").get(idleSeq) as { n: number; b: number }
  const perProbe = idleAudit.b / Math.max(1, idleAudit.n)
  console.log(
    `idle: probe median ${idleMedian.toFixed(2)} ms p99 ${quantile(idle, 0.99).toFixed(2)} ms, rss ${idleRss.toFixed(0)} MB, ` +
      `audit ${perProbe.toFixed(0)} bytes per well-formed call`
  )
  console.log(`server limits: ${limits.join(" ")}; each flood at most ${count} requests or ${seconds} s, ${concurrency} in flight`)

  /** Posts flood bodies with `concurrency` in flight until `count` or the deadline. */
  const postFlood = async (make: (i: number) => Buffer) => {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })
    const statuses = new Map<string, number>()
    const deadline = performance.now() + seconds * 1000
    let next = 0
    const worker = async () => {
      while (next < count && performance.now() < deadline) {
        const body = make(next++)
        // One request waits at most 15 s (the flood stops sending at its deadline).
        const a = await withTimeout(postRaw(agent, url, body).catch(() => "error" as const), 15_000)
        const k = a === "error" ? "reset" : a === "timeout" ? "no answer in 15 s" : String(a.status)
        statuses.set(k, (statuses.get(k) ?? 0) + 1)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    agent.destroy()
    return { sent: next, statuses }
  }

  /** Slow and idle connections: a third silent, a third slowloris, a third slow bodies, reopened when dropped. */
  const slowFlood = async () => {
    const deadline = performance.now() + seconds * 1000
    let opened = 0
    let dropped = 0
    const open = new Set<Net.Socket>()
    const one = (kind: number) => {
      if (performance.now() >= deadline || opened >= count) return
      opened++
      const s = Net.connect(Number(url.port), url.hostname)
      open.add(s)
      s.on("error", () => {})
      s.on("close", () => {
        open.delete(s)
        dropped++
        one(kind)
      })
      s.once("connect", () => {
        if (kind === 1) s.write(`POST ${url.pathname} HTTP/1.1\r\nHost: x\r\n`)
        if (kind === 2) s.write(`POST ${url.pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/writ+json\r\nContent-Length: 60000\r\n\r\n`)
        const t = setInterval(() => {
          if (s.destroyed || performance.now() >= deadline) return clearInterval(t)
          if (kind !== 0) s.write(kind === 1 ? "X" : " ")
        }, 500)
      })
    }
    for (let i = 0; i < Math.min(300, count); i++) one(i % 3)
    while (performance.now() < deadline) await sleep(100)
    const held = open.size
    const droppedByServer = dropped
    for (const s of open) s.destroy()
    return { sent: opened, statuses: new Map([["connections dropped by the server", droppedByServer], ["held at the end", held]]) }
  }

  /** The victim's genuine revokes during a flood, one every 500 ms: accepted (200) or not. */
  const victimRevokes = async (running: () => boolean) => {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    const out = { accepted: 0, refused: 0 }
    while (running()) {
      const r = revoke(root, [writ(root, exec, { act: prefix("v/") })])
      excluded.add(identity(r))
      const a = await postRaw(agent, url, bytes(r)).catch(() => "error" as const)
      if (a !== "error" && a.status === 200) out.accepted++
      else out.refused++
      await sleep(500)
    }
    agent.destroy()
    return out
  }

  const floods: Array<readonly [string, () => Promise<{ sent: number; statuses: Map<string, number> }>]> = [
    ["long did:keys (40000 base58 chars in from / iss)", () => {
      const long = 40_000
      return postFlood((i) =>
        i % 2 === 0
          ? bytes({ v: 1, typ: "call", id: nonce(0x10), chain: probeChain, from: longDidKey(long), op: "b/x", args: {}, sig: junkSig() })
          : bytes({ v: 1, typ: "revoke", writ: "*", iss: longDidKey(long), chain: [], sig: junkSig() })
      )
    }],
    ["distinct bogus keys", () =>
      postFlood((i) =>
        i % 2 === 0
          ? bytes({ v: 1, typ: "call", id: nonce(0x11), chain: probeChain, from: bogusKey(), op: "b/x", args: {}, sig: junkSig() })
          : bytes({ v: 1, typ: "revoke", writ: "*", iss: bogusKey(), chain: [], sig: junkSig() })
      )],
    ["junk revokes from the victim's address", () =>
      postFlood(() => bytes({ ...revoke(root, [writ(root, exec, { act: prefix("j/") })]), sig: junkSig() }))],
    ["slow and idle clients", slowFlood],
    ["oversized op (60000 bytes)", () =>
      postFlood(() =>
        bytes({ v: 1, typ: "call", id: nonce(0x12), chain: probeChain, from: root.did, op: `b/${"x".repeat(60_000)}`, args: {}, sig: junkSig() })
      )]
  ]

  let worstLatency = 0
  let worstRss = idleRss
  try {
    for (const [name, flood] of floods) {
      const seq = lastSeq()
      let running = true
      let peakRss = rssMb()
      const sampler = setInterval(() => { peakRss = Math.max(peakRss, rssMb()) }, 100)
      const probes = probeWhile(() => running, 100_000)
      const victim = victimRevokes(() => running)
      const t0 = performance.now()
      const result = await flood()
      const took = (performance.now() - t0) / 1000
      running = false
      const xs = await probes
      const v = await victim
      clearInterval(sampler)
      await sleep(1500) // audit writes of the last answers and of connections closed at the end
      const audit = auditSince(seq)
      const med = median(xs)
      const p99 = quantile(xs, 0.99)
      worstLatency = Math.max(worstLatency, med / idleMedian)
      worstRss = Math.max(worstRss, peakRss)
      console.log(`flood ${name}: ${result.sent} requests in ${took.toFixed(1)} s (${[...result.statuses].map(([k, n]) => `${k}: ${n}`).join(", ")})`)
      console.log(
        `  probe latency median ${med.toFixed(2)} ms (${(med / idleMedian).toFixed(2)}x idle ${idleMedian.toFixed(2)} ms), ` +
          `p99 ${p99.toFixed(2)} ms (${(p99 / idleMedian).toFixed(2)}x), ${xs.length} probes`
      )
      console.log(`  rss peak ${peakRss.toFixed(0)} MB (idle ${idleRss.toFixed(0)} MB)`)
      console.log(
        `  audit ${audit.rows} entries, ${audit.bytes} bytes: ${(audit.bytes / Math.max(1, result.sent)).toFixed(0)} bytes per flood request ` +
          `(a well-formed call: ${perProbe.toFixed(0)})`
      )
      console.log(`  victim's genuine revokes: ${v.accepted} accepted, ${v.refused} refused`)
    }
  } finally {
    db.close()
    probeAgent.destroy()
    await server.kill()
  }
  if (probeFailures > 0) console.log(`probe calls not answered 200: ${probeFailures}`)
  console.log(`targets: latency within 5x idle median, rss under 400 MB`)
  console.log(`hostile: worst latency ${worstLatency.toFixed(2)} (x idle) rss ${worstRss.toFixed(0)} MB`)
}
