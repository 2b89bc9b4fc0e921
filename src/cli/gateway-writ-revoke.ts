// `mandate gateway writ-revoke --store STORE REVOKE`: records a signed Writ revoke (spec section
// 9.1; sign one with `mandate writ revoke`) in the gateway's store, as `gateway keys revoke`
// withdraws a key there. Every gateway process on that store refuses the revoked writ, and every
// writ below it, with `revoked` from its next Writ call on (section 7 step 7). The store is the
// gateway's only shared state, so recording there binds all its processes at once, and a revoke
// that cannot be written is an error (section 9: never answered as recorded).
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { withGatewayKeys } from "../app/gateway.js"
import { recordRevoke } from "../gateway/writ-revocations.js"
import { unixSeconds } from "../kernel/clock.js"
import { Received } from "../writ/verify.js"
import { cliError, fromWrit, readObjectFile, runCommand } from "./writ-io.js"

const store = Options.text("store").pipe(Options.withDescription("The gateway's store: a SQLite file or postgres://...#SCHEMA"))
const file = Args.file({ name: "REVOKE" }).pipe(Args.withDescription("A signed revoke (mandate writ revoke --out FILE)"))

export const writRevokeCommand = Command.make("writ-revoke", { store, file }, (o) =>
  runCommand(Effect.gen(function*() {
    const { bytes } = yield* readObjectFile(o.file, "a revoke")
    const row = yield* withGatewayKeys(o.store, Effect.flatMap(unixSeconds, (now) => recordRevoke(new Received(bytes), now))).pipe(
      Effect.catchTags({
        WritError: (e) => Effect.fail(fromWrit(e)),
        LedgerError: (e) => Effect.fail(cliError(e.reason, e.detail, o.store)),
        StoreError: (e) => Effect.fail(cliError("mandate/store_unavailable", e.message, o.store))
      })
    )
    yield* Console.log(row.writ === "*" ? `revoked every writ of ${row.iss} (revoke ${row.revoke})` : `revoked ${row.writ} and every writ below it (revoke ${row.revoke})`)
  }))
).pipe(Command.withDescription("Record a signed Writ revoke in the gateway's store: the writ and those below it are refused `revoked` by every gateway on it"))
