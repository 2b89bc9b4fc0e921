// The `mandate writ` subcommands beside `conformance` (mounted by writ.ts): issuing, calling,
// sending, verifying, inspecting, revoking, auditing, serving an executor, and the executor scenarios.
import { writAuditCommand } from "./writ-audit.js"
import { writCallCommand } from "./writ-call.js"
import { writDelegateCommand } from "./writ-delegate.js"
import { writInspectCommand } from "./writ-inspect.js"
import { writIssueCommand } from "./writ-issue.js"
import { writRevokeCommand } from "./writ-revoke.js"
import { writScenariosCommand } from "./writ-scenarios.js"
import { writSendCommand } from "./writ-send.js"
import { writServeCommand } from "./writ-serve.js"
import { writVerifyCommand } from "./writ-verify.js"

export const writSubcommands = [
  writIssueCommand,
  writDelegateCommand,
  writCallCommand,
  writSendCommand,
  writVerifyCommand,
  writRevokeCommand,
  writInspectCommand,
  writAuditCommand,
  writServeCommand,
  writScenariosCommand
] as const
