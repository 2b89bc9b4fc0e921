// Hostile input on the transports the yea:// TCP tests (test/yea-tcp) do not cover: yeas:// (TLS),
// stdio: (the real child process, and the same stream server on in-process pipes) and the HTTP
// bridge. For each: an oversized frame (refused, the transport still usable), a frame split across
// reads, invalid UTF-8, connections beyond the cap refused cleanly (not for stdio: its one
// connection is the parent), and a client that stops reading (disconnected, memory bounded).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import * as tls from "node:tls"
import { serveHttpBridge } from "../../src/bind/yea-http/server.js"
import { serveConnection } from "../../src/bind/yea-stream/serve.js"
import { serveTcp } from "../../src/bind/yea-tcp/server.js"
import { repoRoot } from "../support/shared.js"
import { principalKey } from "../yea/_helpers.js"
import { shop, stores } from "../yea-service/support.js"
import { type RawPeer, rawPeer } from "../yea-tcp/raw.js"
import { cliEntry } from "../support/cli.js"

const hello = (id: string) => JSON.stringify({ yea: 1, id, verb: "HELLO" }) + "\n"
const piece = "a".repeat(65536)
const badUtf8 = Buffer.concat([Buffer.from('{"yea":1,"id":"u","verb":"HELLO","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')])

/** The shared battery on a stream transport: oversized, split, invalid UTF-8, then still usable. */
const streamBattery = (peer: RawPeer) =>
  Effect.promise(async () => {
    peer.write('{"yea":1,"id":"big","verb":"HELLO","x":"')
    for (let i = 0; i < 17; i++) peer.write(piece)
    peer.write('"}\n')
    const refused = await peer.next(30_000)
    expect([refused.kind, refused.code]).toEqual(["ERROR", "bad_frame"])
    for (const ch of hello("split")) peer.write(ch)
    const brief = await peer.next(30_000)
    expect([brief.kind, brief.re]).toEqual(["BRIEF", "split"])
    peer.write(badUtf8)
    const bad = await peer.next(30_000)
    expect([bad.kind, bad.code]).toEqual(["ERROR", "bad_frame"])
    peer.write(hello("after"))
    expect((await peer.next(30_000)).re).toBe("after")
  })

// ---- yeas:// ------------------------------------------------------------------------------------

const cert = (() => {
  const dir = mkdtempSync(join(tmpdir(), "yeas-"))
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "k.pem", "-out", "c.pem", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { cwd: dir, stdio: "pipe" })
  return { key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) }
})()

const rawTls = (port: number): Promise<RawPeer> =>
  new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, ca: cert.cert }, () => resolve(rawPeer(s)))
    s.once("error", reject)
  })

describe("yeas:// (TLS)", () => {
  it.scopedLive("oversized frame, split frame, invalid UTF-8; still usable", () =>
    Effect.gen(function* () {
      const { port, url } = yield* serveTcp(yield* shop, { port: 0, tls: { key: cert.key, cert: cert.cert } })
      expect(url.startsWith("yeas://")).toBe(true)
      const peer = yield* Effect.promise(() => rawTls(port))
      yield* streamBattery(peer)
      peer.socket.destroy()
    }).pipe(Effect.provide(stores)))

  it.scopedLive("connections beyond the cap get one ERROR limit line; a client that stops reading is disconnected", () =>
    Effect.gen(function* () {
      const { port } = yield* serveTcp(yield* shop, { port: 0, maxConnections: 1, maxBufferedBytes: 64 * 1024, tls: { key: cert.key, cert: cert.cert } })
      const a = yield* Effect.promise(() => rawTls(port))
      a.write(hello("a"))
      yield* Effect.promise(() => a.next(30_000))
      const b = yield* Effect.promise(() => rawTls(port))
      const refusal = yield* Effect.promise(() => b.next(30_000))
      expect([refusal.kind, refusal.code]).toEqual(["ERROR", "limit"])
      yield* Effect.promise(() => b.closed(30_000))
      // `a` stops reading while asking for the whole menu 2,000 times.
      a.socket.pause()
      for (let i = 0; i < 2000; i++) a.write(JSON.stringify({ yea: 1, id: `q${i}`, verb: "ASK", capability: "shop.search", budget: 1_000_000 }) + "\n")
      yield* Effect.sleep("3 seconds")
      a.socket.resume()
      yield* Effect.promise(() => a.closed(60_000))
      expect(a.received()).toBeLessThan(2000)
    }).pipe(Effect.provide(stores)))
})

// ---- stdio: ---------------------------------------------------------------------------------------

describe("stdio:", () => {
  it("the real child: oversized frame, split frame, invalid UTF-8; still usable; ends with stdin", async () => {
    const child = spawn(process.execPath, [...cliEntry, "yea", "serve", "shop", "--stdio", "--trust", principalKey], { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] })
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    const timer = setTimeout(() => child.kill("SIGKILL"), 240_000)
    try {
      const peer = rawPeer(Object.assign(child.stdout, { write: (b: string | Uint8Array) => child.stdin.write(b) }) as never)
      const wrapped: RawPeer = { ...peer, write: (b) => void child.stdin.write(b) }
      await Effect.runPromise(streamBattery(wrapped))
      child.stdin.end()
      expect(await exited).toBe(0)
    } finally {
      clearTimeout(timer)
      child.kill("SIGKILL")
    }
  }, 300_000)

  it.scopedLive("the stream server on pipes: a parent that stops reading is disconnected", () =>
    Effect.gen(function* () {
      const input = new PassThrough()
      const output = new PassThrough()
      let destroyed = false
      const served = yield* Effect.fork(serveConnection(yield* shop, input, output, { maxBufferedBytes: 64 * 1024 }, () => {
        destroyed = true
        input.destroy()
        output.destroy()
      }))
      for (let i = 0; i < 500; i++) input.write(JSON.stringify({ yea: 1, id: `q${i}`, verb: "ASK", capability: "shop.search", budget: 1_000_000 }) + "\n")
      yield* Effect.promise(() => new Promise<void>((resolve) => {
        const t = setInterval(() => (destroyed ? (clearInterval(t), resolve()) : undefined), 50)
        setTimeout(() => (clearInterval(t), resolve()), 60_000)
      }))
      expect(destroyed).toBe(true)
      expect(output.readableLength).toBeLessThan(500 * 2000)
      yield* served.await
    }).pipe(Effect.provide(stores)))
})

// ---- HTTP bridge ----------------------------------------------------------------------------------

const rawHttp = (port: number) =>
  new Promise<RawPeer & { readonly text: () => string }>((resolve, reject) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => {
      const peer = rawPeer(s)
      let text = ""
      s.on("data", (d: Buffer) => void (text += d.toString()))
      resolve({ ...peer, text: () => text })
    })
    s.once("error", reject)
  })
const waitFor = (ready: () => boolean, ms: number) =>
  new Promise<void>((resolve, reject) => {
    const t = setInterval(() => (ready() ? (clearInterval(t), clearTimeout(u), resolve()) : undefined), 25)
    const u = setTimeout(() => (clearInterval(t), reject(new Error(`not within ${ms} ms`))), ms)
  })

describe("HTTP bridge", () => {
  it.scopedLive("oversized body (413, declared or streamed), split body, invalid UTF-8; still usable", () =>
    Effect.gen(function* () {
      const { port, url } = yield* serveHttpBridge(yield* shop, { port: 0 })
      const declared = yield* Effect.promise(() => fetch(url, { method: "POST", body: "x".repeat(1024 * 1024 + 1) }))
      expect(declared.status).toBe(413)
      // Streamed without a length: refused as soon as it passes 1 MiB.
      const streamed = yield* Effect.promise(() => rawHttp(port))
      streamed.write("POST /yea HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
      for (let i = 0; i < 17; i++) streamed.write(`${(65536).toString(16)}\r\n${piece}\r\n`)
      yield* Effect.promise(() => waitFor(() => streamed.text().startsWith("HTTP/1.1 413"), 30_000))
      // Split across reads: a chunked body sent a few bytes at a time.
      const split = yield* Effect.promise(() => rawHttp(port))
      split.write("POST /yea HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
      const body = hello("split")
      for (let i = 0; i < body.length; i += 3) {
        const part = body.slice(i, i + 3)
        split.write(`${part.length.toString(16)}\r\n${part}\r\n`)
        yield* Effect.sleep("5 millis")
      }
      split.write("0\r\n\r\n")
      yield* Effect.promise(() => split.closed(30_000))
      expect(split.text()).toContain('"kind":"BRIEF"')
      expect(split.text()).toContain('"re":"split"')
      const bad = yield* Effect.promise(() => fetch(url, { method: "POST", body: badUtf8 }).then((r) => r.text()))
      expect(JSON.parse(bad.trim()).code).toBe("bad_frame")
      const ok = yield* Effect.promise(() => fetch(url, { method: "POST", body: hello("after") }).then((r) => r.text()))
      expect(JSON.parse(ok.trim()).re).toBe("after")
    }).pipe(Effect.provide(stores)))

  it.scopedLive("connections beyond the cap get a 503 and are closed; a client that stops reading is disconnected", () =>
    Effect.gen(function* () {
      const { port } = yield* serveHttpBridge(yield* shop, { port: 0, maxConnections: 1, idleMs: 3000, maxBufferedBytes: 64 * 1024 })
      const a = yield* Effect.promise(() => rawHttp(port))
      yield* Effect.sleep("100 millis")
      const b = yield* Effect.promise(() => rawHttp(port))
      yield* Effect.promise(() => b.closed(30_000))
      expect(b.text()).toMatch(/^HTTP\/1\.1 503 /)
      // `a` pipelines 2,000 requests for the whole menu and reads nothing.
      a.socket.pause()
      const ask = JSON.stringify({ yea: 1, id: "q", verb: "ASK", capability: "shop.search", budget: 1_000_000 })
      const req = `POST /yea HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(ask)}\r\n\r\n${ask}`
      for (let i = 0; i < 2000; i++) a.write(req)
      yield* Effect.sleep("5 seconds")
      a.socket.resume()
      yield* Effect.promise(() => a.closed(60_000))
      expect(a.text().split("HTTP/1.1 200").length - 1).toBeLessThan(2000)
      // The server is still there for the next client.
      const brief = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.json() as Promise<{ kind: string }>))
      expect(brief.kind).toBe("BRIEF")
    }).pipe(Effect.provide(stores)))
})
