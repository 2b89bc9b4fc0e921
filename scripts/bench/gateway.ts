// `npm run bench -- gateway [--n N] [--concurrency C] [--seconds S]`: what the gateway adds to a
// model call (issue 29). The upstream is the loopback fake in a process of its own; the client
// (node:http, keep-alive) and the gateway (SQLite store, the reservation core, one reserve and one
// settlement per call) share this process, so the calls/s ratio counts the gateway's CPU against
// the client's. Baseline, measured in the same run: the same requests sent to the upstream directly.
//
// Latency: N sequential calls each way, non-streamed and streamed; overhead = gateway p50 (p99)
// minus direct p50 (p99). Throughput: C concurrent callers for S seconds, non-streamed; R = gateway
// calls/s over direct calls/s. CPU: this process's user+system time per call, gateway minus direct.
// Summary: `gateway: overhead p50 X ms p99 Y ms, Z calls/s = R x direct` (target p50 < 1 ms, R >= 0.7).
import { Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gatewayStores } from "../../src/app/gateway.js"
import { startGateway } from "../../src/gateway/server.js"
import { RandomBytes } from "../../src/kernel/index.js"
import { flag } from "./_limit.js"

const here = dirname(fileURLToPath(import.meta.url))
const body = (stream: boolean) =>
  JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello in one word." }], max_tokens: 64, ...(stream ? { stream: true } : {}) })

const startUpstream = () =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(here, "_gateway-upstream.ts")], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n").find((l) => l.startsWith("http://"))
      if (line !== undefined) resolve({ url: line.trim(), stop: () => child.kill("SIGTERM") })
    })
    child.on("exit", (code) => reject(new Error(`upstream exited ${code}`)))
  })

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One POST /v1/chat/completions to `base`, the whole answer read; resolves with its latency in ms. */
const call = (base: URL, payload: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = http.request({
      host: base.hostname, port: base.port, path: "/v1/chat/completions", method: "POST", agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), authorization: "Bearer bench-key" }
    }, (res) => {
      res.on("data", () => {})
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`))))
    })
    req.on("error", reject)
    req.end(payload)
  })

const pct = (xs: Array<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}

const sequential = async (base: URL, payload: string, n: number) => {
  for (let i = 0; i < Math.min(200, n); i++) await call(base, payload) // warm-up
  const lat: Array<number> = []
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < n; i++) lat.push(await call(base, payload))
  const cpu = process.cpuUsage(cpu0)
  return { p50: pct(lat, 50), p99: pct(lat, 99), cpuMicros: (cpu.user + cpu.system) / n }
}

const throughput = async (base: URL, payload: string, callers: number, seconds: number) => {
  let n = 0
  const end = performance.now() + seconds * 1000
  const t0 = performance.now()
  await Promise.all(Array.from({ length: callers }, async () => {
    while (performance.now() < end) {
      await call(base, payload)
      n++
    }
  }))
  return n / ((performance.now() - t0) / 1000)
}

export const run = async (args: ReadonlyArray<string>) => {
  const n = flag(args, "n", 2000)
  const callers = flag(args, "concurrency", 8)
  const seconds = flag(args, "seconds", 4)
  const dir = mkdtempSync(join(tmpdir(), "bench-gateway-"))
  const upstream = await startUpstream()
  const rt = ManagedRuntime.make(Layer.merge(gatewayStores(join(dir, "gw.db")), RandomBytes.live))
  const gw = await startGateway({ upstreams: { openai: upstream.url }, upstreamKeys: {}, defaultBudget: { limit: 10n ** 15n } }, await rt.runtime(), { port: 0 })
  try {
    const direct = new URL(upstream.url)
    const via = new URL(gw.url)
    const rows: Array<{ name: string; d: Awaited<ReturnType<typeof sequential>>; g: Awaited<ReturnType<typeof sequential>> }> = []
    for (const stream of [false, true]) {
      const d = await sequential(direct, body(stream), n)
      const g = await sequential(via, body(stream), n)
      rows.push({ name: stream ? "streamed" : "not streamed", d, g })
    }
    for (const { d, g, name } of rows) {
      console.log(
        `${name.padEnd(13)} direct p50 ${d.p50.toFixed(3)} ms p99 ${d.p99.toFixed(3)} ms | gateway p50 ${g.p50.toFixed(3)} ms p99 ${g.p99.toFixed(3)} ms | ` +
          `overhead p50 ${(g.p50 - d.p50).toFixed(3)} ms p99 ${(g.p99 - d.p99).toFixed(3)} ms, CPU ${(g.cpuMicros - d.cpuMicros).toFixed(0)} us/call added (n ${n})`
      )
    }
    const dRate = await throughput(direct, body(false), callers, seconds)
    const gRate = await throughput(via, body(false), callers, seconds)
    console.log(`throughput (${callers} callers, ${seconds} s, not streamed): direct ${dRate.toFixed(0)} calls/s, gateway ${gRate.toFixed(0)} calls/s`)
    const plain = rows[0]!
    console.log(
      `gateway: overhead p50 ${(plain.g.p50 - plain.d.p50).toFixed(2)} ms p99 ${(plain.g.p99 - plain.d.p99).toFixed(2)} ms, ` +
        `${gRate.toFixed(0)} calls/s = ${(gRate / dRate).toFixed(2)} x direct`
    )
  } finally {
    await gw.close()
    await rt.dispose()
    upstream.stop()
    agent.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}
