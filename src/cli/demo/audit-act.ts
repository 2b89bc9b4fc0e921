// The demo's act 9: the audit records of B and C (section 9.3), read after both executors have
// stopped, hold every refusal the acts before provoked.
import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import { auditLine, readAudit } from "../writ-audit.js"
import type { Transcript } from "./transcript.js"

export const audits = (t: Transcript, out: string) =>
  Effect.gen(function*() {
    yield* t.step("9. The audit records (section 9.3): one entry per call or revoke, refusals included")
    const fs = yield* FileSystem.FileSystem
    const want: Record<string, ReadonlyArray<string>> = {
      B: ["out_of_bounds", "count_exhausted", "expired", "revoked", "bad_signature"],
      C: ["not_narrowed", "count_exhausted", "wrong_executor", "not_reversible"]
    }
    for (const name of ["B", "C"] as const) {
      const entries = yield* Effect.either(readAudit(`${out}/${name.toLowerCase()}.sqlite`))
      if (Either.isLeft(entries)) {
        yield* t.expect(`${name}'s audit record is readable`, false, entries.left.message)
        continue
      }
      yield* Effect.ignore(fs.writeFileString(`${out}/audit-${name}.jsonl`, entries.right.map((e) => JSON.stringify(e)).join("\n") + "\n"))
      yield* t.log(`  ${name}: ${entries.right.length} entries -> out/audit-${name}.jsonl`)
      for (const e of entries.right) yield* t.log(`    ${auditLine(e)}`)
      const reasons = new Set(entries.right.map((e) => e.reason))
      yield* t.expect(`${name}'s record holds the refusals ${want[name].join(", ")}`, want[name].every((r) => reasons.has(r)))
    }
  })
