// The gateway's HTTP server (node:http, no framework: the hot path is a body read, one reserve, a
// relay and one settlement). Routes: POST /v1/chat/completions, POST /v1/responses (OpenAI), POST
// /v1/messages (Anthropic), GET /v1/models (forwarded). The route alone decides the provider and
// the upstream; the upstream's host comes from the configuration only: the request's Host,
// X-Forwarded-* and every other header not on the short forwarding list are dropped, and the path
// forwarded is the route's own, never the client's string.
//
// Life of a call: key -> body (capped) -> request read -> model allowed -> worst-case price ->
// reserve on every level (refused: a provider-shaped error, no upstream call) -> forward ->
// settle on the answer's usage (a stream's final usage chunk; on a disconnect or a missing usage,
// an estimate from what was relayed, marked estimated) or release on an upstream error that billed
// nothing.
import * as http from "node:http"
import { Cause, Context, Effect, Either, Exit, Runtime } from "effect"
import { OwnerLease } from "../accounting/owner-lease.js"
import type { Atomic, Reservations } from "../accounting/reservations.js"
import { encodeBase64url, RandomBytes } from "../kernel/index.js"
import type { EventBody } from "../ledger/events.js"
import { GuardAbort, type RunResult } from "../ledger/guard.js"
import type { Action } from "../ledger/model.js"
import { toNanos } from "../ledger/usd.js"
import type { LedgerWriter } from "../ledger/writer.js"
import type { Mode } from "./budget.js"
import type { CallRecord, GatewayConfig, KeyInfo } from "./config.js"
import { callAction, type CallFacts, callPolicy, costOf, makeCallGuards, NANOS_PER_MICRO, refusalOf, runOf, type SettlementWaiters, UpstreamFailedAfterOutput } from "./guarded-call.js"
import { headerOf, headersFor, keyOf, readBody, relayHeaders, request, sha256Hex, type Upstream, upstreamOf } from "./http.js"
import { type GatewayServerCode, SERVER_STATUS } from "./reason.js"
import { Wire } from "./wire-adapter.js"
import { admitWrit, type AdmittedWrit, CALL_HEADER, finalTally, recordWritDecision, refusalTally, TALLY_HEADER, withWritDraws, writDraws, WritRefused, writRefusalOf, writStatus } from "./writ-budget.js"
import { type Provider, type RequestInfo, type Route, ROUTE_PATH, routeOfPath, type Usage } from "./wire/types.js"

export type { CallRecord, GatewayConfig, KeyInfo, KeyLookup } from "./config.js"

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096

const providerOfRoute = (route: Route | "openai.models"): Provider => (route === "anthropic.messages" ? "anthropic" : "openai")

export interface Gateway {
  readonly server: http.Server
  readonly url: string
  readonly close: () => Promise<void>
}

/** What the gateway's Effects need: the reservation core and the ledger on one store, and its owner lease. */
export type GatewayServices = Reservations | Atomic | LedgerWriter | OwnerLease | RandomBytes

/** Starts the gateway on `host:port`; the Effects it runs take their services from `runtime`. */
export const startGateway = (
  config: GatewayConfig,
  runtime: Runtime.Runtime<GatewayServices>,
  listen: { readonly port: number; readonly host?: string }
): Promise<Gateway> => {
  const maxBody = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const defaultOut = config.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
  const timeZone = config.timeZone ?? "UTC"
  const priceOf = config.priceOf ?? Wire.priceOf
  const upstreams: Record<Provider, Upstream | undefined> = { openai: upstreamOf(config.upstreams.openai), anthropic: upstreamOf(config.upstreams.anthropic) }
  const run = <A, E>(eff: Effect.Effect<A, E, GatewayServices>) => Runtime.runPromiseExit(runtime)(eff)
  // Hoisted out of the hot path: the runtime's clock and randomness are read directly, not each
  // through an Effect run of its own (issue 30: no runtime tax per call).
  const clock = Runtime.runSync(runtime)(Effect.clock)
  const now = () => clock.unsafeCurrentTimeMillis()
  const random = Context.get(runtime.context, RandomBytes)
  const awaitingSettlement: SettlementWaiters = new Map()
  const guards = Runtime.runSync(runtime)(makeCallGuards(awaitingSettlement))

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = now()
    const path = (req.url ?? "/").split("?")[0]
    const route: Route | "openai.models" | undefined = req.method === "GET" && path === "/v1/models" ? "openai.models" : req.method === "POST" ? routeOfPath(path) : undefined
    const provider = route === undefined ? "openai" : providerOfRoute(route)
    let keyHash: string | undefined
    let info: RequestInfo | undefined
    let mode: Mode = config.defaultMode ?? "enforce"

    const record = (r: Partial<CallRecord> & Pick<CallRecord, "decision" | "status">) =>
      config.onCall?.({
        keyHash, route: route ?? "openai.chat", model: info?.model, mode, code: undefined, reservation: undefined, reserved: 0n, charged: 0n,
        settlement: "none", estimated: false, overrun: 0n, inputTokens: 0, outputTokens: 0, latencyMs: now() - started, ...r
      })
    const refuse = (code: GatewayServerCode | string, message: string, status?: number, extra: Record<string, string> = {}) => {
      const s = status ?? SERVER_STATUS[code as GatewayServerCode] ?? 400
      if (!res.headersSent) {
        const body = Wire.refusalBody(provider, s, code, `${message} (${code})`)
        res.writeHead(s, { "content-type": "application/json", "content-length": body.length, ...(s === 413 ? { connection: "close" } : {}), ...extra })
        res.end(body)
      }
      record({ decision: "refused", code, status: s })
    }

    if (route === undefined) {
      req.resume()
      return refuse("gateway/not_found", `no route ${req.method} ${path}`)
    }
    const key = keyOf(req)
    // A Writ call stands instead of a key, or beside one (then both must hold).
    const writHeader = config.writ === undefined ? undefined : headerOf(req, CALL_HEADER)
    // GET /v1/models is not a Writ operation: it needs a key.
    if (key === undefined && (writHeader === undefined || route === "openai.models")) {
      req.resume()
      return refuse("gateway/key_missing", "no gateway key: send it as Authorization: Bearer KEY (or x-api-key)")
    }
    keyHash = key === undefined ? undefined : sha256Hex(key)
    const declared = Number(req.headers["content-length"] ?? "0")
    if (declared > maxBody) {
      // Answered at once, the rest discarded; the connection closes after the answer.
      req.resume()
      return refuse("gateway/body_too_large", `the body is larger than the gateway's cap of ${maxBody} bytes`)
    }
    const body = await readBody(req, maxBody)
    if (body === "too_large") return refuse("gateway/body_too_large", `the body is larger than the gateway's cap of ${maxBody} bytes`)
    if (body === "aborted") return

    const hash = keyHash
    // No key (a Writ call alone) or no key store: no Effect run for a lookup that has nothing to look in.
    let known: KeyInfo | "revoked" | undefined
    if (config.lookup !== undefined && hash !== undefined) {
      const looked = await run(config.lookup(hash))
      if (Exit.isFailure(looked)) return refuse("gateway/store_unavailable", "the gateway's store did not answer")
      known = looked.value
    }
    if (known === "revoked") return refuse("gateway/key_revoked", "this gateway key was revoked")
    const keyInfo: KeyInfo | undefined = hash === undefined ? { hash: "", mode: "enforce", levels: [] } : known ??
      (config.defaultBudget === undefined ? undefined : { hash, mode, levels: [{ level: "key", id: hash, budget: config.defaultBudget }] })
    if (keyInfo === undefined) return refuse("gateway/key_unknown", "this gateway key is not known")
    mode = keyInfo.mode
    const up = upstreams[provider]
    if (up === undefined) return refuse("gateway/upstream_unreachable", `no upstream is configured for ${provider}`)

    if (route === "openai.models") return forwardPlain(req, res, up, provider, record)

    const read = Wire.readRequest(route, body)
    if (Either.isLeft(read)) return refuse(read.left.code, read.left.message, read.left.status)
    info = read.right
    const nowMs = now()
    const at = new Date(nowMs)
    const maxOut = info.maxOutputTokens ?? defaultOut
    const worstUsage: Usage = { inputTokens: info.inputTokensEstimate, outputTokens: maxOut, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: true }
    const worstPrice = priceOf(info.provider, info.model, worstUsage, at)
    const worst = Either.isRight(worstPrice) ? worstPrice.right : undefined
    // Writ: section 7 steps 1 to 8 (writ-budget.ts); a refusal after the signature verified carries a signed tally.
    let writ: AdmittedWrit | undefined
    const refuseWrit = (e: WritRefused, from?: string) => {
      void run(recordWritDecision({ from, basis: e.basis, refused: e.code }))
      return refuse(e.code, e.message, writStatus(e.code), refusalTally(config.writ, e.basis, e.code))
    }
    if (writHeader !== undefined && config.writ !== undefined) {
      const admitted = await run(admitWrit(config.writ, writHeader, { route, model: info.model, body }, Math.floor(nowMs / 1000)))
      if (Exit.isFailure(admitted)) {
        const f = Cause.failureOption(admitted.cause)
        if (f._tag === "Some" && f.value._tag === "WritRefused") return refuseWrit(f.value)
        return refuse("gateway/store_unavailable", "the gateway's store did not answer")
      }
      writ = admitted.value
      // A writ's bounds are authority, not a policy under trial: they bind in every mode.
      mode = "enforce"
      if (worst !== undefined && worst > writ.cap) {
        return refuseWrit(new WritRefused({ code: "out_of_bounds", message: `the call's worst case, ${worst} micro-USD, is above its usd argument ${writ.cap}`, basis: writ.basis }), writ.from)
      }
    }
    const described: Omit<CallFacts, "id"> = {
      route, provider: info.provider, model: info.model, stream: info.stream,
      keyId: keyInfo.levels.find((l) => l.level === "key")?.id ?? keyHash ?? `writ.${writ?.basis.writ ?? "none"}`,
      user: keyInfo.user, team: keyInfo.team, levels: keyInfo.levels, models: keyInfo.models, worst, ceiling: keyInfo.ceiling,
      inputTokens: info.inputTokensEstimate, maxOutputTokens: maxOut
    }
    const requestInfo = info
    const priceNow = (u: Usage) => {
      const p = priceOf(requestInfo.provider, requestInfo.model, u, at)
      return Either.isRight(p) ? p.right : 0n
    }
    // What the forwarded call came to; the guard settles on it (guard.ts runAndSettle).
    let outcome: { readonly how: "commit" | "release" | "fail"; readonly usage: Usage | undefined; readonly status: number } | undefined
    const admittedWrit = writ
    const writTally = admittedWrit === undefined || config.writ === undefined ? undefined : finalTally(config.writ, admittedWrit.basis, worst, priceNow)
    const forward = (action: Action) => Effect.async<RunResult<number>, GuardAbort | UpstreamFailedAfterOutput>((resume) => {
      void forwardCall(req, res, up, provider, requestInfo, (how, usage, status) => {
        outcome = { how, usage, status }
        const latency = now() - started
        if (how === "release") resume(Effect.fail(new GuardAbort({ detail: `upstream answered ${status} and billed nothing` })))
        // A 2xx answer without usage: the worst case stays charged (estimated), never zero.
        else if (usage === undefined) resume(Effect.succeed({ value: status, actual: { ...action.estimate, latency_ms: latency }, tokens: action.tokens_estimate!, estimated: true }))
        else {
          const c = costOf(usage, priceNow(usage), latency)
          resume(how === "commit"
            ? Effect.succeed({ value: status, ...c, estimated: usage.estimated })
            : Effect.fail(new UpstreamFailedAfterOutput({ actual: c.actual, estimated: usage.estimated, status })))
        }
        return Promise.resolve()
      }, config.upstreamKeys[provider], writTally)
    })
    // The settlement line the guard writes for this call: what the record reports is what the ledger holds.
    let settlement: Extract<EventBody, { type: "settlement" }> | undefined
    const guard = guards[mode]
    // One Effect run per call: the call's id, then the guard (reserve with its lines, forward, settle).
    const program = Effect.flatMap(random.bytes(16), (bytes) => {
      const facts: CallFacts = { ...described, id: `gw-${encodeBase64url(bytes)}` }
      const action = callAction(facts)
      const policy = callPolicy(facts, guards.limitNamespace, timeZone, nowMs)
      awaitingSettlement.set(facts.id, (b) => (settlement = b))
      return guard.guardDetailed(action, forward(action), {
        policy: admittedWrit === undefined ? policy : withWritDraws(policy, writDraws(admittedWrit, worst ?? 0n)),
        runId: runOf(facts),
        failureSpend: (e) => e.actual,
        failureEstimated: (e) => e.estimated
      }).pipe(Effect.ensuring(Effect.sync(() => awaitingSettlement.delete(facts.id))))
    })
    const exit = await run(program)
    if (outcome === undefined) {
      // Not forwarded: refused by the policy, or the store did not answer (enforce never runs unrecorded).
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
      if (failure !== undefined && failure._tag === "Some" && (failure.value._tag === "ActionDenied" || failure.value._tag === "DirectiveIssued")) {
        const w = admittedWrit === undefined ? undefined : writRefusalOf(failure.value.decision.policy)
        if (w !== undefined) return refuseWrit(new WritRefused({ ...w, basis: admittedWrit!.basis }), admittedWrit!.from)
        const r = refusalOf(failure.value.decision, worst, described)
        return refuse(r.code, r.message, undefined, refusalTally(config.writ, admittedWrit?.basis, r.code))
      }
      return refuse("gateway/store_unavailable", "the gateway's store did not answer")
    }
    const done = outcome
    const kept = settlement === undefined ? undefined : toNanos(settlement.kept_usd) / NANOS_PER_MICRO
    if (admittedWrit !== undefined) void run(recordWritDecision({ from: admittedWrit.from, basis: admittedWrit.basis, usedMicro: kept ?? 0n }))
    record({
      decision: "allowed", status: done.status, reservation: settlement?.reservation_id, reserved: worst ?? 0n,
      charged: kept ?? 0n,
      settlement: settlement === undefined ? "none" : settlement.state,
      estimated: settlement?.estimated === true || (done.how !== "release" && done.usage === undefined),
      overrun: settlement?.overrun_usd === undefined ? 0n : toNanos(settlement.overrun_usd) / NANOS_PER_MICRO,
      inputTokens: done.usage?.inputTokens ?? 0, outputTokens: done.usage?.outputTokens ?? 0
    })
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: "gateway error", type: "api_error", code: null } }))
      } else res.destroy()
    })
  })
  server.keepAliveTimeout = 5_000
  const upstreamKeys = config.upstreamKeys

  const forwardPlain = (req: http.IncomingMessage, res: http.ServerResponse, up: Upstream, provider: Provider, record: (r: Partial<CallRecord> & Pick<CallRecord, "decision" | "status">) => void) =>
    new Promise<void>((resolve) => {
      const out = request(up, "GET", "/v1/models", headersFor(req, provider, upstreamKeys[provider]), (ures) => {
        res.writeHead(ures.statusCode ?? 502, relayHeaders(ures))
        ures.pipe(res)
        ures.on("end", () => {
          record({ decision: "allowed", status: ures.statusCode ?? 502 })
          resolve()
        })
      })
      out.on("error", () => {
        if (!res.headersSent) {
          const b = Wire.refusalBody(provider, 502, "gateway/upstream_unreachable", "the upstream did not answer")
          res.writeHead(502, { "content-type": "application/json" })
          res.end(b)
        }
        resolve()
      })
      out.end()
    })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(listen.port, listen.host ?? "127.0.0.1", () => {
      const addr = server.address()
      const port = typeof addr === "object" && addr !== null ? addr.port : listen.port
      resolve({
        server,
        url: `http://${listen.host ?? "127.0.0.1"}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            server.closeAllConnections()
            upstreams.openai?.agent.destroy()
            upstreams.anthropic?.agent.destroy()
          })
      })
    })
  })
}

const estimateOf = (info: RequestInfo, outputTokens: number): Usage => ({
  inputTokens: info.inputTokensEstimate, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: true
})

const forwardCall = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  up: Upstream,
  provider: Provider,
  info: RequestInfo,
  settle: (how: "commit" | "release" | "fail", usage: Usage | undefined, status: number) => Promise<void>,
  upstreamKey: string | undefined,
  /** Headers that depend on the outcome (the Writ tally): written with a whole answer, as trailers after a stream. */
  final?: (how: "commit" | "release" | "fail", usage: Usage | undefined) => Record<string, string>
): Promise<void> =>
  new Promise<void>((resolve) => {
    let settled = false
    const once = (how: "commit" | "release" | "fail", usage: Usage | undefined, status: number) => {
      if (settled) return
      settled = true
      settle(how, usage, status).finally(resolve)
    }
    const headers = headersFor(req, provider, upstreamKey)
    headers["content-length"] = info.upstreamBody.length
    const out = request(up, "POST", ROUTE_PATH[info.route], headers, (ures) => {
      const status = ures.statusCode ?? 502
      const isStream = status < 300 && String(ures.headers["content-type"] ?? "").includes("text/event-stream")
      if (isStream || final === undefined) res.writeHead(status, { ...relayHeaders(ures), ...(isStream && final !== undefined ? { trailer: TALLY_HEADER } : {}) })
      if (!isStream) {
        const chunks: Array<Buffer> = []
        ures.on("data", (c: Buffer) => chunks.push(c))
        ures.on("end", () => {
          const buf = Buffer.concat(chunks)
          const usage = status >= 300 ? undefined : Wire.readUsage(info.route, buf)
          if (final !== undefined) res.writeHead(status, { ...relayHeaders(ures), ...final(status >= 300 ? "release" : "commit", usage) })
          res.end(buf)
          if (status >= 300) return once("release", undefined, status)
          // No usage in a 2xx answer: the reservation is kept whole (estimated), never zero.
          once("commit", usage, status)
        })
        ures.on("error", () => {
          if (!res.headersSent) res.writeHead(status, relayHeaders(ures))
          res.destroy()
          once(status >= 300 ? "release" : "commit", undefined, status)
        })
        return
      }
      const meter = Wire.makeStreamMeter(info)
      const measured = (): Usage => meter.usage() ?? estimateOf(info, meter.relayedOutputTokensEstimate())
      let ended = false
      ures.on("data", (c: Buffer) => {
        const relay = meter.push(c)
        if (relay.length > 0 && !res.write(relay)) {
          // Backpressure: the upstream waits for the client.
          ures.pause()
          res.once("drain", () => ures.resume())
        }
      })
      ures.on("end", () => {
        ended = true
        if (final !== undefined) res.addTrailers(final("commit", measured()))
        res.end()
        once("commit", measured(), status)
      })
      const broken = () => {
        if (ended) return
        // The upstream failed after partial output: what it produced is billed.
        res.destroy()
        const u = measured()
        if (u.outputTokens === 0 && meter.usage() === undefined) once("release", undefined, 502)
        else once("fail", u, 502)
      }
      ures.on("aborted", broken)
      ures.on("error", broken)
      ures.on("close", broken)
      res.on("close", () => {
        if (ended || res.writableFinished) return
        // The client left mid-stream: the upstream is stopped and charged for what it produced.
        out.destroy()
        ures.destroy()
        once("commit", measured(), 499)
      })
    })
    out.on("error", () => {
      if (!res.headersSent) {
        const b = Wire.refusalBody(provider, 502, "gateway/upstream_unreachable", "the upstream did not answer (gateway/upstream_unreachable)")
        res.writeHead(502, { "content-type": "application/json", "content-length": b.length })
        res.end(b)
      }
      once("release", undefined, 502)
    })
    out.end(info.upstreamBody)
  })

/** One request header as a string (a repeated one is not accepted as a value). */
