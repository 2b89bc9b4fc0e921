/**
 * Lens renderings of YEA replies (SPEC §9.2). A service-supplied `lens` member is never shown:
 * the client renders from the frame itself, so a service cannot show the model something other
 * than what it sent.
 *
 * Two renderings come from one factory: `lensReply` is the specification's, byte for byte (text
 * written by the service is shown raw, as the templates say); `lensReplyHardened` passes that text
 * through {@link printable}, so that it cannot forge lines or hide characters, and is the one to
 * show a model text from a third-party service (README, "Lens"). Non-string values in template
 * positions render as lean scalars (`-` when missing).
 */
import {
  lensDuration,
  lensProposalUndo,
  lensReceiptUndo,
  lensTime,
  lensUses
} from "./fields.js"
import { printable } from "./printable.js"
import { type Escape, get, Hardened, has, isObject, type Lean, type Obj, Spec } from "./value.js"

type AttrName = "uses" | "risk" | "undo" | "expires"
const ATTRS: ReadonlyArray<AttrName> = ["uses", "risk", "undo", "expires"]

/** The reply renderings over one lean rendering and one text escape. */
export const makeReplyLens = (lean: Lean, esc: Escape) => {
  /** Untrusted text in a template position. */
  const text = (v: unknown): string => (typeof v === "string" ? esc(v) : lean.leanScalar(v))

  /** Present for an optional line or part: neither missing nor `null`. */
  const present = (v: unknown): boolean => v !== undefined && v !== null

  const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])

  const SYMBOL: { readonly [op: string]: string } = { create: "+", update: "~", delete: "-", send: ">", other: "*" }

  /** `SYM op target[.field][: from → to][ — detail]`; an unknown op takes the `other` symbol. */
  const effectLine = (e: unknown): string => {
    const op = get(e, "op")
    const sym = typeof op === "string" && Object.prototype.hasOwnProperty.call(SYMBOL, op) ? SYMBOL[op] : "*"
    let line = `${sym} ${text(op)} ${text(get(e, "target"))}`
    const field = get(e, "field")
    if (field !== undefined) line += "." + text(field)
    const from = get(e, "from")
    const to = get(e, "to")
    if (from !== undefined || to !== undefined) line += `: ${lean.leanScalar(from)} → ${lean.leanScalar(to)}`
    const detail = get(e, "detail")
    if (detail !== undefined) line += " — " + text(detail)
    return line
  }

  /** `… {remaining} more at {path} — EXPAND {handle} (~{est} tokens)` for each More entry. */
  const moreLines = (more: unknown, out: Array<string>): void => {
    for (const m of asArray(more)) {
      out.push(
        `… ${text(get(m, "remaining"))} more at ${text(get(m, "path"))} — EXPAND ${text(get(m, "handle"))} (~${text(get(m, "est"))} tokens)`
      )
    }
  }

  // ---- BRIEF -------------------------------------------------------------------------------------

  /** A compact parameter type (§4.1.1): strings raw, nested objects `{k: type, …}`, arrays `[…]`. */
  const paramType = (t: unknown): string => {
    if (typeof t === "string") return esc(t)
    if (Array.isArray(t)) return `[${t.map(paramType).join(", ")}]`
    if (isObject(t)) return `{${paramList(t)}}`
    return lean.leanScalar(t)
  }

  const paramList = (params: Obj): string =>
    Object.keys(params)
      .map((k) => `${esc(k)}: ${paramType(params[k])}`)
      .join(", ")

  const capabilityLine = (c: unknown): string => {
    const params = get(c, "params")
    const list = isObject(params) ? paramList(params) : present(params) ? lean.inline(params) : ""
    let line = `${text(get(c, "kind"))} ${text(get(c, "name"))}(${list})`
    const summary = get(c, "summary")
    if (present(summary)) line += " — " + text(summary)
    const risk = get(c, "risk")
    if (present(risk)) line += ` [risk:${text(risk)}]`
    return line
  }

  const brief = (f: Obj, out: Array<string>): void => {
    const service = get(f, "service")
    out.push(`# ${text(get(service, "name"))} (${text(get(service, "id"))})`)
    const summary = get(service, "summary")
    if (present(summary)) out.push(text(summary))
    for (const c of asArray(f.capabilities)) out.push(capabilityLine(c))
  }

  // ---- PROPOSALS ---------------------------------------------------------------------------------


  /** The rendered attributes of one proposal, in the fixed order; `uses` is undefined when omitted. */
  const proposalAttributes = (p: unknown): Readonly<Record<AttrName, string | undefined>> => ({
    uses: lensUses(get(p, "uses")),
    risk: lean.leanScalar(get(p, "risk")),
    undo: lensProposalUndo(get(p, "undo"), lean.leanScalar),
    expires: lensTime(get(p, "expires"), lean.leanScalar)
  })

  const joinAttrs = (attrs: Readonly<Record<AttrName, string | undefined>>, names: ReadonlyArray<AttrName>): string =>
    names
      .filter((a) => attrs[a] !== undefined)
      .map((a) => `${a}: ${attrs[a]}`)
      .join(" · ")

  const proposals = (f: Obj, out: Array<string>): void => {
    const ps = asArray(f.proposals)
    const attrs = ps.map(proposalAttributes)
    // With two or more proposals, an attribute whose rendering is identical across all of them is
    // stated once on the header. An omitted `uses` (undefined) is never shared.
    const shared =
      ps.length >= 2
        ? ATTRS.filter((a) => attrs[0][a] !== undefined && attrs.every((x) => x[a] === attrs[0][a]))
        : []
    const own = ATTRS.filter((a) => !shared.includes(a))
    const head = ps.length === 1 ? "1 proposal" : `${ps.length} proposals`
    out.push(shared.length > 0 ? `${head} — ${joinAttrs(attrs[0], shared)}:` : `${head}:`)
    ps.forEach((p, i) => {
      out.push(`[${text(get(p, "id"))}] ${text(get(p, "summary"))}`)
      for (const e of asArray(get(p, "effects"))) out.push("  " + effectLine(e))
      const line = joinAttrs(attrs[i], own)
      if (line !== "") out.push("  " + line)
      if (isObject(p) && has(p, "data") && p.data !== undefined) lean.entryLines("data", p.data, 1, out)
    })
  }

  // ---- CLARIFY, RECEIPT, ERROR, EVENT --------------------------------------------------------------

  const clarify = (f: Obj, out: Array<string>): void => {
    out.push(`? ${text(f.question)}`)
    asArray(f.options).forEach((o, i) => out.push(`  ${i + 1}. ${text(get(o, "label"))}`))
  }

  const receipt = (f: Obj, out: Array<string>): void => {
    const r = get(f, "receipt")
    const replay = f.replay === true ? " (replay)" : ""
    const id = text(get(r, "id"))
    const summary = text(get(r, "summary"))
    const undoes = get(r, "undoes")
    if (present(undoes)) {
      // An undo receipt: its own undo is null by definition, and its effects were the proposal's.
      out.push(`↶ undid ${text(undoes)}: ${summary} (receipt ${id})${replay}`)
    } else {
      out.push(`✓ ${summary} (receipt ${id})${replay} · ${lensReceiptUndo(get(r, "undo"), lean.leanScalar)}`)
      // Effects are shown only for auto-commits: otherwise the model has read them in the proposal.
      if (f.auto === true) for (const e of asArray(get(r, "effects"))) out.push("  " + effectLine(e))
    }
    if (isObject(r) && has(r, "result") && r.result !== undefined) lean.entryLines("result", r.result, 1, out)
  }

  const fixLine = (x: unknown): string => {
    if (!isObject(x)) return `  fix: ${lean.inline(x)}`
    const params = get(x, "params")
    return `  fix: ${text(x.say)}${present(params) ? ` → params ${lean.compactJson(params)}` : ""}`
  }

  const error = (f: Obj, out: Array<string>): void => {
    out.push(`✗ ${text(f.code)}: ${text(f.message)}`)
    if (present(f.fix)) {
      if (Array.isArray(f.fix)) for (const x of f.fix) out.push(fixLine(x))
      else out.push(fixLine(f.fix))
    }
    if (present(f.need)) out.push(`  need: ${lean.compactJson(f.need)}`)
    const consent = f.consent
    if (present(consent)) {
      out.push(`  consent: principal must approve ${text(get(consent, "hash"))} (${text(get(consent, "summary"))})`)
    }
    if (present(f.retry)) out.push(`  retry in: ${lensDuration(f.retry, lean.leanScalar)}`)
  }

  /** A progress in [0, 1] shows as a whole percentage; anything else is left out. */
  const event = (f: Obj, out: Array<string>): void => {
    const p = f.progress
    const pct = typeof p === "number" && p >= 0 && p <= 1 ? ` (${Math.floor(p * 100 + 0.5)}%)` : ""
    out.push(`… ${text(f.message)}${pct}`)
  }

  // ---- dispatch ----------------------------------------------------------------------------------

  /** Frame members that are envelope, not content: an unknown kind renders without them. */
  const ENVELOPE = new Set(["yea", "id", "re", "more", "lens"])

  const unknownKind = (f: Obj, out: Array<string>): void => {
    const body: Record<string, unknown> = {}
    for (const k of Object.keys(f)) {
      if (!ENVELOPE.has(k)) Object.defineProperty(body, k, { value: f[k], enumerable: true, writable: true, configurable: true })
    }
    lean.valueLines(body, out)
  }

  const RENDER: { readonly [kind: string]: (f: Obj, out: Array<string>) => void } = {
    BRIEF: brief,
    ANSWER: (f, out) => lean.valueLines(get(f, "data"), out),
    PROPOSALS: proposals,
    CLARIFY: clarify,
    RECEIPT: receipt,
    ERROR: error,
    EVENT: event
  }

  /** The lines of a reply frame's Lens, `more` lines included. */
  const replyLines = (frame: unknown, out: Array<string>): void => {
    if (!isObject(frame)) {
      lean.valueLines(frame, out)
      return
    }
    const kind = get(frame, "kind")
    const render = typeof kind === "string" && Object.prototype.hasOwnProperty.call(RENDER, kind) ? RENDER[kind] : unknownKind
    render(frame, out)
    moreLines(get(frame, "more"), out)
  }

  /** The Lens of a reply frame (§9.2). Total: never throws. */
  const lensReply = (frame: unknown): string => {
    const out: Array<string> = []
    replyLines(frame, out)
    return out.join("\n")
  }

  return { text, effectLine, moreLines, proposalAttributes, replyLines, lensReply }
}

/** §9.2 exactly (the conformance vectors' rendering). */
export const SpecReply = makeReplyLens(Spec, (t) => t)
/** §9.2 with service-written text escaped (printable.ts): for text from untrusted services. */
export const HardenedReply = makeReplyLens(Hardened, printable)

export const { text, effectLine, moreLines, proposalAttributes, replyLines, lensReply } = SpecReply
/** The hardened Lens of a reply frame: what an agent shows a model of a third-party service's reply. */
export const lensReplyHardened = HardenedReply.lensReply
