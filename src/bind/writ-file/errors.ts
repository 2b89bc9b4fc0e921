// The reasons the file binding fails with, defined once: section 11's (a Writ check, or the
// executor's unsigned answer), and the binding's own.
import { Schema } from "effect"
import { ImplementationCode, MissingCall, MissingTally } from "../../writ/binding-reason.js"
import { WritReason } from "../../writ/reason.js"

export const FileReason = Schema.Union(
  WritReason,
  /** No call file beside the work. */
  MissingCall,
  /** No tally file beside the work (the work does not count as done). */
  MissingTally,
  Schema.Literal(
    /** The work's bytes no longer hash to the `work_sha256` the call signed. */
    "file/work_changed",
    /** A file could not be read, or is not a regular file. */
    "file/unreadable",
    /** A file could not be written. */
    "file/unwritable",
    /** A different call is already handed over beside this work. */
    "file/exists"
  ),
  ImplementationCode
)
export type FileReason = typeof FileReason.Type

export class FileBindError extends Schema.TaggedError<FileBindError>()("FileBindError", {
  reason: FileReason,
  path: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export const fileError = (reason: FileReason, path: string, message: string) => new FileBindError({ reason, path, message })
