// Presets of `mandate yea openapi --preset NAME` (reference openapi.md, "Presets"; docs/yea-commands.md
// "Presets"). Some APIs are too big to hand an agent whole, so a preset is four things: the
// OpenAPI document (shipped inside the package, presets/*.ts: there is no fetching one at start),
// an allow-list of its operations with a risk for each write, the projection of each answer
// (projection.ts), and the environment variables it reads for credentials. A credential becomes a
// header of the upstream Layer (src/bind/yea-openapi): it is sent upstream on every call and never
// appears in a capability, a proposal or an answer, so the model never sees it.
//
// Wrapped writes cannot be undone (index.ts), so whatever risk a preset gives a write, it is never
// auto-committed: a risk only decides whether a grant's ceiling lets it commit without consent.
import type { OperationRule } from "./index.js"

/** An environment variable read for a credential, and the header it is sent upstream in. */
export interface Credential {
  readonly env: string
  readonly header: string
  /** Put before the value (`Bearer` for a token); none sends the value as it is. */
  readonly scheme?: string
}

export interface Preset {
  readonly name: string
  readonly summary: string
  /** The service id proofs are bound to (a grant's `svc`), whatever `--base` points at. */
  readonly id: string
  /** The capability prefix: `github.issues_list_for_repo`. */
  readonly prefix: string
  /** The OpenAPI 3 document; its first server is the default base URL. */
  readonly spec: unknown
  /** The allow-list, by operationId. */
  readonly operations: Readonly<Record<string, OperationRule>>
  readonly credentials: ReadonlyArray<Credential>
}

/**
 * The headers of a preset's credentials, from `lookup` (the environment, read by the caller through
 * Config): only the variables that are set give a header; the names of those that did are returned
 * so the command can say which were used, never their values.
 */
export const credentialHeaders = (preset: Preset, lookup: (name: string) => string | undefined): { readonly headers: Record<string, string>; readonly used: ReadonlyArray<string> } => {
  const headers: Record<string, string> = {}
  const used: Array<string> = []
  for (const c of preset.credentials) {
    const v = lookup(c.env)?.trim()
    if (v === undefined || v === "") continue
    headers[c.header] = c.scheme === undefined ? v : `${c.scheme} ${v}`
    used.push(c.env)
  }
  return { headers, used }
}
