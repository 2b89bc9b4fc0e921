// The gateway benchmark's upstream, in a process of its own so that its work is not counted in the
// measuring process: the tests' loopback fake (test/gateway/fake-upstream.ts), URL on stdout.
import { startFake } from "../../test/gateway/fake-upstream.js"

const fake = await startFake()
console.log(fake.url)
process.on("SIGTERM", () => void fake.close().then(() => process.exit(0)))
