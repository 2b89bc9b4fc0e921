// The bridge (SPEC-bridge): `mandate yea mcp URL...` serves YEA services to MCP clients as one
// tool per remote capability plus `yea_undo`, `yea_expand` and `yea_consent`. The authority stays
// with the service: the bridge has no policy of its own (only the local `deny`). It shows
// proposals and results as hardened Lens (the text comes from another party), relays consent
// (a `pc1.` code for `yea approve`, handed back with `yea_consent`; or, with a principal key on
// this machine and a client that shows forms, the typed phrase), and commits.
//
// It uses the SDK's low-level `Server` (not `McpServer`): the tools' JSON Schemas come from the
// services' params as they are, which `McpServer` (zod schemas only, in 1.x) can't publish.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { createHash } from "node:crypto"
import { Effect, Either, Option, Runtime } from "effect"
import { unixSeconds } from "../../kernel/clock.js"
import { RandomBytes, Signer, type SignerShape } from "../../kernel/services.js"
import type { YeaClientShape } from "../../yea/client.js"
import { canonical } from "../../yea/canonical.js"
import { consentCaveats, encodeConsentCode, issueConsentGrant } from "../../yea/consent.js"
import type { FinalReply } from "../../yea/frame.js"
import { decodeGrant, verifyChain } from "../../yea/grant.js"
import { lensReplyHardened } from "../../yea/lens/reply.js"
import type { Proposal } from "../../yea/proposal.js"
import { buildForm, checkState, judgeAnswer, makeCodec, makeMemoryApprovalStore, newState, type HashedPlan } from "../../yea/approval/index.js"
import { bridgeTools, oneLine, type BridgeTool } from "./bridge-tools.js"
import { errorResult, textResult } from "./render.js"
import type { Extra } from "./context.js"
import { FORM_TIMEOUT_MS, whileAsking } from "./keep-alive.js"

export interface BridgeService {
  readonly client: YeaClientShape
  readonly id: string
  readonly name: string
  readonly capabilities: ReadonlyArray<{ readonly name: string; readonly kind: string; readonly summary?: string; readonly params?: unknown }>
}

export interface BridgeOptions {
  /** The agent's key: consents are issued to it. */
  readonly agent: string
  readonly grants: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  /** `--approve-here`: the principal's key on this machine, to sign a consent the person typed for. */
  readonly principal?: SignerShape
}

interface Pending {
  readonly service: BridgeService
  readonly proposals: ReadonlyArray<Proposal>
}

const MAX_PENDING = 256
const CONSENT_LINE = "Ask the user to run `mandate yea approve <code>` where their principal key is, then paste the printed consent back to you and call yea_consent with it, then call this tool again."

const lens = (reply: unknown) => lensReplyHardened(reply).split("\n")
/** A reply as a tool result: an ERROR is `isError`; everything else is Lens text with the frame as data. */
const asResult = (reply: FinalReply): CallToolResult =>
  reply.kind === "ERROR" ? errorResult(lens(reply), { reply }) : textResult(lens(reply), { reply })

/** Params hashed as JSON with sorted keys (not canonical: a service's `number` may be a float). */
const paramsKey = (tool: string, params: Record<string, unknown>) => {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sorted) : typeof v === "object" && v !== null ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])])) : v
  return `${tool}\u0000${createHash("sha256").update(JSON.stringify(sorted(params))).digest("base64url")}`
}

const asPlan = (p: Proposal): HashedPlan => ({
  tool: p.capability,
  plan: { summary: p.summary, effects: p.effects as never, ...(p.uses === undefined ? {} : { uses: p.uses }), risk: p.risk, ...(p.undo === null ? {} : { undoWindow: p.undo.window > 0 ? p.undo.window : 1 }) },
  planHash: p.hash,
  risk: p.risk,
  undoable: p.undo !== null
})

/** Builds the bridge's MCP server over connected services; `skipped` names what isn't served. */
export const makeBridge = Effect.fn("yea.mcp.bridge")(function* (services: ReadonlyArray<BridgeService>, options: BridgeOptions) {
  const ids = new Set<string>()
  for (const s of services) {
    if (ids.has(s.id)) return yield* Effect.die(new Error(`two services claim the id ${s.id}`))
    ids.add(s.id)
  }
  const caps = services.flatMap((s) => s.capabilities.filter((c) => c.kind === "ask" || c.kind === "intent").map((c) => ({ service: s.id, name: c.name, kind: c.kind as "ask" | "intent", summary: c.summary, params: c.params })))
  const { tools, skipped } = bridgeTools(caps)
  const byName = new Map(tools.map((t) => [t.tool, t]))
  const serviceOf = (id: string) => services.find((s) => s.id === id)
  const pending = new Map<string, Pending>()
  const consents = new Map<string, string>() // proposal hash → consent grant (from yea_consent)
  const principal = options.grants.length > 0 ? Either.getOrUndefined(Either.map(decodeGrant(options.grants[0]), (g) => g.principal)) : undefined
  const rt = yield* Effect.runtime<RandomBytes>()
  const codec = makeCodec(yield* (yield* RandomBytes).bytes(32))
  const store = yield* makeMemoryApprovalStore
  const server = new Server({ name: "mandate-yea-bridge", version: "0.1.0" }, { capabilities: { tools: {} } })
  const deny = options.deny ?? []

  const codesFor = (s: BridgeService, proposals: ReadonlyArray<Proposal>) =>
    proposals.flatMap((p) => {
      if (principal === undefined) return []
      const consent = { proposal: p.id, hash: p.hash, service: s.id, capability: p.capability, principal, summary: p.summary, expires: p.expires }
      const code = encodeConsentCode({ consent, detail: p, agent: options.agent })
      return Either.isRight(code) ? [{ proposal: p.id, hash: p.hash, code: code.right }] : []
    })

  const proposalsResult = (t: BridgeTool, s: BridgeService, proposals: ReadonlyArray<Proposal>): CallToolResult => {
    if (principal === undefined) return errorResult(["Nothing ran: these proposals need a grant to commit; run `mandate yea grant` for this agent.", ...lens({ kind: "PROPOSALS", proposals })])
    const codes = codesFor(s, proposals.filter((p) => !deny.includes(p.capability)))
    return textResult(
      ["Nothing ran: the service needs the person's approval (or commit one within your grant by calling again with proposal).", ...lens({ kind: "PROPOSALS", proposals }), ...codes.map((c) => `[${c.proposal}] approval code: ${c.code}`), CONSENT_LINE],
      { proposals: [...proposals], codes, tool: t.tool }
    )
  }

  /** --approve-here: the typed phrase in the client, then a consent signed by the local principal. */
  const approveHere = (t: BridgeTool, s: BridgeService, proposals: ReadonlyArray<Proposal>, key: string, extra?: Extra) =>
    Effect.gen(function* () {
      const signer = options.principal!
      const plans = proposals.map(asPlan)
      const form = buildForm(plans, "the service needs your approval", { deny, outOfBand: "high" }, {})
      if (form === null) return Option.none<CallToolResult>()
      let round = 1
      for (;;) {
        // The state is sealed, opened, checked and its nonce consumed once per round, as mcp-ts does.
        const ih = key.split("\u0000")[1]
        const sealed = yield* codec.mint({ yea: yield* newState({ tool: t.tool, inputHash: ih, sub: "", plans: form.offered, round }) }, t.tool)
        const answer = yield* whileAsking(extra, Effect.promise(() =>
          server.elicitInput({ mode: "form", message: form.message, requestedSchema: form.requestedSchema as never }, { timeout: FORM_TIMEOUT_MS }).catch(() => undefined)))
        const state = yield* checkState(((yield* codec.open(sealed, t.tool)) as { yea?: unknown }).yea, { tool: t.tool, inputHash: ih, sub: "", now: yield* unixSeconds })
        if (!(yield* store.consumeOnce(state.nonce, state.exp))) return Option.some(errorResult(["✗ refused: this approval was already used; nothing ran"]))
        const verdict = yield* Effect.either(judgeAnswer(state, answer as never, plans, { deny, outOfBand: "high" }, {}))
        if (Either.isLeft(verdict)) {
          if (verdict.left._tag === "AskAgain") {
            round = verdict.left.round
            continue
          }
          return Option.some(errorResult([`✗ ${verdict.left.code}: ${verdict.left.why}; nothing ran`]))
        }
        const p = proposals.find((x) => x.hash === verdict.right.planHash)!
        const first = yield* s.client.commit(p)
        if (first.kind !== "ERROR" || first.code !== "consent_required") return Option.some(asResult(first))
        const { consent } = yield* s.client.consentOf(first)
        if (consent.principal !== principal || consent.principal !== encodeKeyOf(signer)) return Option.some(errorResult(["✗ the consent request names another principal; nothing ran"]))
        const grant = yield* issueConsentGrant(consent, options.agent).pipe(Effect.provideService(Signer, signer))
        return Option.some(asResult(yield* s.client.commit(p, { grants: [grant] })))
      }
    })

  const intent = (t: BridgeTool, s: BridgeService, args: Record<string, unknown>, extra?: Extra) =>
    Effect.gen(function* () {
      const { goal, preview, proposal, ...params } = args
      if (deny.includes(t.name) || deny.includes(`${s.id}/${t.name}`)) return errorResult([`✗ denied: your policy never allows ${t.name}`])
      if (preview === true) return asResult(yield* s.client.intent(t.name, params, typeof goal === "string" ? { goal } : {}))
      const key = paramsKey(t.tool, params)
      const entry = pending.get(key)
      if (typeof proposal === "string") {
        const p = entry?.proposals.find((x) => x.id === proposal)
        if (p === undefined) return errorResult(["✗ refused: no pending proposal with that id for this input; call without proposal first"])
        const saved = consents.get(p.hash)
        const reply = yield* s.client.commit(p, saved === undefined ? {} : { grants: [saved] })
        if (reply.kind === "RECEIPT") pending.delete(key)
        return reply.kind === "ERROR" && reply.code === "consent_required" ? proposalsResult(t, s, [p]) : asResult(reply)
      }
      if (entry !== undefined) {
        const now = yield* unixSeconds
        const live = entry.proposals.filter((p) => p.expires > now)
        for (const p of live) {
          const saved = consents.get(p.hash)
          if (saved === undefined) continue
          consents.delete(p.hash) // used once: a replayed call never commits twice
          const reply = yield* s.client.commit(p, { grants: [saved] })
          if (reply.kind === "RECEIPT") pending.delete(key)
          return asResult(reply)
        }
        if (live.length > 0) return proposalsResult(t, s, live)
        pending.delete(key)
      }
      const reply = yield* s.client.intent(t.name, params, { auto: true, ...(typeof goal === "string" ? { goal } : {}) })
      if (reply.kind !== "PROPOSALS") return asResult(reply)
      const mine = reply.proposals.filter((p) => p.capability === t.name)
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value as string)
      pending.set(key, { service: s, proposals: mine })
      if (options.principal !== undefined && server.getClientCapabilities()?.elicitation?.form !== undefined) {
        const done = yield* approveHere(t, s, mine, key, extra)
        if (Option.isSome(done)) {
          pending.delete(key)
          return done.value
        }
      }
      return proposalsResult(t, s, mine)
    })

  /** yea_consent: saves a consent only if it is exactly one pending proposal's (SPEC-bridge). */
  const saveConsent = (token: string) =>
    Effect.gen(function* () {
      const now = yield* unixSeconds
      const g = decodeGrant(token)
      if (Either.isLeft(g) || g.right.blocks.length !== 1) return errorResult(["✗ refused: not a consent grant (a pg1. grant of one root block)"])
      const grant = g.right
      if (Either.isLeft(verifyChain(grant, { trusted: [grant.principal], proofKey: grant.holder }))) return errorResult(["✗ refused: the consent's signature does not verify"])
      if (grant.principal !== principal || grant.holder !== options.agent) return errorResult(["✗ refused: the consent is not from your principal to this agent"])
      for (const entry of pending.values()) {
        for (const p of entry.proposals) {
          const want = consentCaveats({ service: entry.service.id, capability: p.capability, hash: p.hash, expires: (grant.root.caveats[4] as { exp?: number })?.exp ?? 0, proposal: p.id, principal: "", summary: "" })
          const same = grant.root.caveats.length === 5 && want.every((c, i) => Either.getOrUndefined(canonical(c)) === Either.getOrUndefined(canonical(grant.root.caveats[i])))
          if (!same) continue
          if (!((want[4].exp as number) > now)) return errorResult(["✗ refused: the consent has expired"])
          consents.set(p.hash, token)
          return textResult([`saved a consent for proposal ${p.id} (${oneLine(p.summary)}); call the tool again to commit it`])
        }
      }
      return errorResult(["✗ refused: the consent is not for any pending proposal"])
    })

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...tools.map((t) => ({
        name: t.tool,
        description: oneLine(t.summary ?? `${t.kind} ${t.name}`),
        inputSchema: t.inputSchema as never,
        annotations: t.kind === "ask" ? { readOnlyHint: true } : { destructiveHint: true, readOnlyHint: false },
        _meta: { "dev.yea/service": t.service, "dev.yea/capability": t.name }
      })),
      { name: "yea_undo", description: "Undo a receipt within its window (UNDO)", inputSchema: { type: "object" as const, properties: { service: { type: "string" }, receipt: { type: "string" } }, required: ["service", "receipt"] }, annotations: { destructiveHint: true, idempotentHint: true } },
      { name: "yea_expand", description: "Fetch an elided part of a result (EXPAND)", inputSchema: { type: "object" as const, properties: { service: { type: "string" }, handle: { type: "string" } }, required: ["service", "handle"] }, annotations: { readOnlyHint: true } },
      { name: "yea_consent", description: "Hand back a consent the person signed with `mandate yea approve`", inputSchema: { type: "object" as const, properties: { token: { type: "string" } }, required: ["token"] } }
    ]
  }))

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>
    const run = (eff: Effect.Effect<CallToolResult, unknown, RandomBytes>) =>
      Runtime.runPromise(rt)(eff.pipe(Effect.catchAll((e) => Effect.succeed(errorResult([`✗ ${typeof e === "object" && e !== null && "reason" in e ? String((e as { reason: unknown }).reason) : "error"}: ${e instanceof Error ? e.message : String((e as { message?: unknown })?.message ?? e)}`])))))
    const name = req.params.name
    if (name === "yea_consent") return run(saveConsent(String(args.token)))
    if (name === "yea_undo" || name === "yea_expand") {
      const s = serviceOf(String(args.service))
      if (s === undefined) return errorResult(["✗ no such service"])
      return run(Effect.map(name === "yea_undo" ? s.client.undo(String(args.receipt)) : s.client.expand(String(args.handle)), asResult))
    }
    const t = byName.get(name)
    const s = t === undefined ? undefined : serviceOf(t.service)
    if (t === undefined || s === undefined) return errorResult([`✗ no such tool ${oneLine(name)}`])
    if (t.kind === "ask") return run(Effect.map(s.client.ask(t.name, args), asResult))
    return run(intent(t, s, args, extra))
  })
  return { server, skipped, tools: tools.map((t) => t.tool) }
})

const encodeKeyOf = (s: SignerShape) => `ed25519:${Buffer.from(s.publicKey).toString("base64url")}`
