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
import { Effect, Either, FiberSet, Option } from "effect"
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
import { bridgeTools, oneLine, type BridgeTool, type ToolsMode } from "./bridge-tools.js"
import { effectiveTightening } from "./policy-file.js"
import { memoryBridgeMemory, type BridgeMemory } from "./bridge-memory.js"
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
  /** The parsed local `policy.json`, read on every call (policy-file.ts): its `deny` joins `deny`. */
  readonly policyFile?: Effect.Effect<unknown>
  /** `--approve-here`: the principal's key on this machine, to sign a consent the person typed for. */
  readonly principal?: SignerShape
  /** Where pending proposals and consents are kept (bridge-memory.ts); default: this process's memory. */
  readonly memory?: BridgeMemory
  /** `--tools`: per-capability tools, generic ones, or generic past 25 capabilities (default). */
  readonly tools?: ToolsMode
}

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
  const { tools, skipped } = bridgeTools(caps, options.tools ?? "auto")
  const byName = new Map(tools.map((t) => [t.tool, t]))
  const serviceOf = (id: string) => services.find((s) => s.id === id)
  const memory = options.memory ?? (yield* memoryBridgeMemory)
  const principal = options.grants.length > 0 ? Either.getOrUndefined(Either.map(decodeGrant(options.grants[0]), (g) => g.principal)) : undefined
  // Each tool call runs as a fiber of a FiberSet owned by the caller's scope: closing it (the
  // process ending, a test finishing) interrupts every call in flight, none is left unowned.
  const runPromise = yield* FiberSet.makeRuntimePromise<RandomBytes, CallToolResult, never>()
  const codec = makeCodec(yield* (yield* RandomBytes).bytes(32))
  const store = yield* makeMemoryApprovalStore
  const instructions = genericInstructions(services, tools)
  const newServer = () => new Server({ name: "mandate-yea-bridge", version: "0.1.0" }, { capabilities: { tools: {} }, ...(instructions === "" ? {} : { instructions }) })
  /** The deny list in force for this call, or why none can be known (then nothing runs). */
  const denyNow = Effect.map(options.policyFile ?? Effect.succeed(undefined), (file) => effectiveTightening({ deny: options.deny ?? [], outOfBand: "high" }, file))

  const codesFor = (s: BridgeService, proposals: ReadonlyArray<Proposal>) =>
    proposals.flatMap((p) => {
      if (principal === undefined) return []
      const consent = { proposal: p.id, hash: p.hash, service: s.id, capability: p.capability, principal, summary: p.summary, expires: p.expires }
      const code = encodeConsentCode({ consent, detail: p, agent: options.agent })
      return Either.isRight(code) ? [{ proposal: p.id, hash: p.hash, code: code.right }] : []
    })

  const proposalsResult = (t: BridgeTool, s: BridgeService, proposals: ReadonlyArray<Proposal>, deny: ReadonlyArray<string>): CallToolResult => {
    if (principal === undefined) return errorResult(["Nothing ran: these proposals need a grant to commit; run `mandate yea grant` for this agent.", ...lens({ kind: "PROPOSALS", proposals })])
    const codes = codesFor(s, proposals.filter((p) => !deny.includes(p.capability)))
    return textResult(
      ["Nothing ran: the service needs the person's approval (or commit one within your grant by calling again with proposal).", ...lens({ kind: "PROPOSALS", proposals }), ...codes.map((c) => `[${c.proposal}] approval code: ${c.code}`), CONSENT_LINE],
      { proposals: [...proposals], codes, tool: t.tool }
    )
  }

  /** --approve-here: the typed phrase in the client, then a consent signed by the local principal. */
  const approveHere = (server: Server, t: BridgeTool, s: BridgeService, proposals: ReadonlyArray<Proposal>, key: string, deny: ReadonlyArray<string>, extra?: Extra) =>
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

  /** The deny check before anything is sent (SPEC-mcp-ts step 2: a denied tool shows nothing). */
  const denied = (t: BridgeTool, s: BridgeService) =>
    Effect.map(denyNow, (tight): { readonly refused: CallToolResult } | { readonly deny: ReadonlyArray<string> } => {
      if (!tight.ok) return { refused: errorResult([`✗ refused: ${tight.why}; nothing ran`]) }
      const deny = tight.value.deny
      if (deny.includes(t.name) || deny.includes(`${s.id}/${t.name}`)) return { refused: errorResult([`✗ denied: your policy never allows ${t.name}`]) }
      return { deny }
    })

  const intent = (server: Server, t: BridgeTool, s: BridgeService, params: Record<string, unknown>, extras: { readonly goal?: unknown; readonly preview?: unknown; readonly proposal?: unknown }, extra?: Extra) =>
    Effect.gen(function* () {
      const { goal, preview, proposal } = extras
      const check = yield* denied(t, s)
      if ("refused" in check) return check.refused
      const deny = check.deny
      if (preview === true) return asResult(yield* s.client.intent(t.name, params, typeof goal === "string" ? { goal } : {}))
      const key = paramsKey(t.tool, params)
      const stored = yield* memory.getPending(key)
      const entry = stored?.service === s.id ? stored : undefined
      if (typeof proposal === "string") {
        const p = entry?.proposals.find((x) => x.id === proposal)
        if (p === undefined) return errorResult(["✗ refused: no pending proposal with that id for this input; call without proposal first"])
        const saved = yield* memory.getConsent(p.hash)
        const reply = yield* s.client.commit(p, saved === undefined ? {} : { grants: [saved] })
        if (reply.kind === "RECEIPT") yield* Effect.zip(memory.deletePending(key), memory.deleteConsent(p.hash))
        return reply.kind === "ERROR" && reply.code === "consent_required" ? proposalsResult(t, s, [p], deny) : asResult(reply)
      }
      if (entry !== undefined) {
        const now = yield* unixSeconds
        const live = entry.proposals.filter((p) => p.expires > now)
        for (const p of live) {
          const saved = yield* memory.getConsent(p.hash)
          if (saved === undefined) continue
          yield* memory.deleteConsent(p.hash) // used once: a replayed call never commits twice
          const reply = yield* s.client.commit(p, { grants: [saved] })
          if (reply.kind === "RECEIPT") yield* memory.deletePending(key)
          return asResult(reply)
        }
        if (live.length > 0) return proposalsResult(t, s, live, deny)
        yield* memory.deletePending(key)
      }
      const reply = yield* s.client.intent(t.name, params, { auto: true, ...(typeof goal === "string" ? { goal } : {}) })
      if (reply.kind !== "PROPOSALS") return asResult(reply)
      const mine = reply.proposals.filter((p) => p.capability === t.name)
      yield* memory.setPending(key, { service: s.id, proposals: mine })
      if (options.principal !== undefined && server.getClientCapabilities()?.elicitation?.form !== undefined) {
        const done = yield* approveHere(server, t, s, mine, key, deny, extra)
        if (Option.isSome(done)) {
          yield* memory.deletePending(key)
          return done.value
        }
      }
      return proposalsResult(t, s, mine, deny)
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
      for (const entry of yield* memory.allPending) {
        for (const p of entry.proposals) {
          const want = consentCaveats({ service: entry.service, capability: p.capability, hash: p.hash, expires: (grant.root.caveats[4] as { exp?: number })?.exp ?? 0, proposal: p.id, principal: "", summary: "" })
          const same = grant.root.caveats.length === 5 && want.every((c, i) => Either.getOrUndefined(canonical(c)) === Either.getOrUndefined(canonical(grant.root.caveats[i])))
          if (!same) continue
          if (!((want[4].exp as number) > now)) return errorResult(["✗ refused: the consent has expired"])
          yield* memory.putConsent(p.hash, token)
          return textResult([`saved a consent for proposal ${p.id} (${oneLine(p.summary)}); call the tool again to commit it`])
        }
      }
      return errorResult(["✗ refused: the consent is not for any pending proposal"])
    })

  /**
   * A server on this bridge: one per stdio process, or one per Streamable HTTP session. The
   * pending proposals, consents and services are the bridge's, shared by every session (SPEC-bridge:
   * they live in the bridge() closure, not in the server factory).
   */
  const build = () => {
    const server = newServer()
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        ...tools.map((t) => ({
          name: t.tool,
          description: oneLine(t.summary ?? `${t.kind} ${t.name}`),
          inputSchema: t.inputSchema as never,
          annotations: t.kind === "ask" ? { readOnlyHint: true } : { destructiveHint: true, readOnlyHint: false },
          _meta: t.generic === undefined ? { "dev.yea/service": t.service, "dev.yea/capability": t.name } : { "dev.yea/service": t.service, "dev.yea/generic": t.kind }
        })),
        { name: "yea_undo", description: "Undo a receipt within its window (UNDO)", inputSchema: { type: "object" as const, properties: { service: { type: "string" }, receipt: { type: "string" } }, required: ["service", "receipt"] }, annotations: { destructiveHint: true, idempotentHint: true } },
        { name: "yea_expand", description: "Fetch an elided part of a result (EXPAND)", inputSchema: { type: "object" as const, properties: { service: { type: "string" }, handle: { type: "string" } }, required: ["service", "handle"] }, annotations: { readOnlyHint: true } },
        { name: "yea_consent", description: "Hand back a consent the person signed with `mandate yea approve`", inputSchema: { type: "object" as const, properties: { token: { type: "string" } }, required: ["token"] } }
      ]
    }))

    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>
      const run = (eff: Effect.Effect<CallToolResult, unknown, RandomBytes>) =>
        runPromise(eff.pipe(Effect.catchAll((e) => Effect.succeed(errorResult([`✗ ${typeof e === "object" && e !== null && "reason" in e ? String((e as { reason: unknown }).reason) : "error"}: ${e instanceof Error ? e.message : String((e as { message?: unknown })?.message ?? e)}`])))))
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
      // A generic tool names its capability: from here on it runs as that capability's own tool
      // would (SPEC-bridge: "A generic intent call runs the same steps"), keyed apart per capability.
      let one: BridgeTool = t
      let params: Record<string, unknown> = args
      if (t.generic !== undefined) {
        const cap = args.capability
        if (typeof cap !== "string" || !t.generic.capabilities.includes(cap)) return errorResult([`✗ invalid_params: capability must be one of this service's ${t.kind} capabilities (see the instructions)`])
        const p = args.params ?? {}
        if (typeof p !== "object" || p === null || Array.isArray(p)) return errorResult(["✗ invalid_params: params must be an object"])
        one = { ...t, name: cap, tool: `${t.tool}/${cap}` }
        params = p as Record<string, unknown>
      }
      if (one.kind === "ask") return run(Effect.flatMap(denied(one, s), (check) => ("refused" in check ? Effect.succeed(check.refused) : Effect.map(s.client.ask(one.name, params), asResult))))
      if (t.generic !== undefined) return run(intent(server, one, s, params, { goal: args.goal, preview: args.preview, proposal: args.proposal }, extra))
      const { goal, preview, proposal, ...own } = args
      return run(intent(server, one, s, own, { goal, preview, proposal }, extra))
    })
    return server
  }
  return { server: build(), newServer: build, skipped, tools: tools.map((t) => t.tool) }
})

/** Instructions characters for the generic services' capability lists (SPEC-bridge: as many full lines as fit, then names). */
const INSTRUCTIONS_BUDGET = 24_000

/** The capabilities behind each generic tool, from the BRIEF kept at start (no second HELLO). */
const genericInstructions = (services: ReadonlyArray<BridgeService>, tools: ReadonlyArray<BridgeTool>): string => {
  const lines: Array<string> = []
  let used = 0
  for (const t of tools) {
    if (t.generic === undefined) continue
    const s = services.find((x) => x.id === t.service)
    const head = `${oneLine(s?.name ?? t.service)} (${t.service}): call ${t.tool} with one of these ${t.kind} capabilities:`
    lines.push(head)
    used += head.length
    const rest: Array<string> = []
    for (const name of t.generic.capabilities) {
      const c = s?.capabilities.find((x) => x.name === name)
      const line = `- ${oneLine(name)}${c?.summary === undefined ? "" : ` — ${oneLine(c.summary)}`}${c?.params === undefined ? "" : ` params ${oneLine(JSON.stringify(c.params))}`}`
      if (rest.length === 0 && used + line.length <= INSTRUCTIONS_BUDGET) {
        lines.push(line)
        used += line.length
      } else rest.push(oneLine(name))
    }
    if (rest.length > 0) lines.push(`- and by name only: ${rest.join(", ")}`)
  }
  return lines.join("\n")
}

const encodeKeyOf = (s: SignerShape) => `ed25519:${Buffer.from(s.publicKey).toString("base64url")}`
