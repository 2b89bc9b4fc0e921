// Connect by URL (SPEC §2.3): `yea://` TCP, `yeas://` TLS, `http(s)://` the HTTP bridge, and
// `stdio:` a child process (its command given beside the URL, since §2.3 names none).
import { Effect, Scope } from "effect"
import type { YeaConnection } from "../../yea/client.js"
import { yeaError, type YeaError } from "../../yea/reason.js"
import { connectHttp } from "../yea-http/client.js"
import { connectStdio } from "../yea-stdio/index.js"
import { connectTcp, type TcpConnectOptions } from "../yea-tcp/client.js"

export interface ConnectOptions extends TcpConnectOptions {
  /** For `stdio:`: the command and its arguments. */
  readonly command?: ReadonlyArray<string>
}

export const connect = (url: string, options: ConnectOptions = {}): Effect.Effect<YeaConnection, YeaError, Scope.Scope> =>
  Effect.gen(function* () {
    const u = yield* Effect.try({ try: () => new URL(url), catch: () => yeaError("bad_frame", `not a URL: ${url}`) })
    switch (u.protocol) {
      case "yea:":
      case "yeas:":
        return yield* connectTcp(u, options)
      case "http:":
      case "https:":
        return connectHttp(u, options)
      case "stdio:": {
        const [command, ...args] = options.command ?? []
        if (command === undefined) return yield* Effect.fail(yeaError("bad_frame", "stdio: needs a command to run"))
        return yield* connectStdio(command, args, options)
      }
      default:
        return yield* Effect.fail(yeaError("bad_frame", `unknown YEA transport ${u.protocol}`))
    }
  })
