// Biscuit's side of `npm run bench -- peers`: `@biscuit-auth/biscuit-wasm` (the Rust biscuit-auth
// library compiled to WebAssembly). The root key (from the shared seed) signs an authority block;
// each further link appends an attenuation block, signed by the previous block's next key (the
// library draws those ephemeral keys itself). Verifying a token: `Biscuit.fromBytes` under the
// root public key (every block's signature, the key chain), then an authorizer holding the
// request's facts (time = the fixed now, operation, amount, currency, date) and the policy
// `allow if right("travel")` runs every block's checks, the datalog form of attenuation.
//
// On Node 20: the package declares `engines: node >= 22` and is built for bundlers (its entry does
// `import * as wasm from "./biscuit_bg.wasm"`, an ES module import of WebAssembly that Node 20 does
// not do without --experimental-wasm-modules). Nothing else needs Node 22, so this file does what
// that import does: compiles the package's own .wasm, instantiates it with the package's own glue
// module (and its snippet modules) as imports, hands the instance to the glue and starts it.
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { amountOf, ascii, expOf, KEYS, nonceOf, NOW, offsetIn, type Peer } from "./_peers-common.js"

const PACKAGE = "@biscuit-auth/biscuit-wasm"
type Module = typeof import("@biscuit-auth/biscuit-wasm")
type Token = import("@biscuit-auth/biscuit-wasm").Biscuit
type Authorizer = import("@biscuit-auth/biscuit-wasm").Authorizer

/** The package's glue module with its WebAssembly instance attached, read through FileSystem. */
const load: Effect.Effect<Module, unknown> = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  // The package directory by node's own search path (its `exports` name no subpath to resolve,
  // and vitest's module runner has no import.meta.resolve).
  let dir: URL | undefined
  for (const base of createRequire(import.meta.url).resolve.paths(PACKAGE) ?? []) {
    const candidate = join(base, PACKAGE, "module")
    if (yield* fs.exists(join(candidate, "biscuit_bg.wasm"))) {
      dir = pathToFileURL(`${candidate}/`)
      break
    }
  }
  if (dir === undefined) return yield* Effect.fail(new Error(`${PACKAGE} is not installed`))
  const glue = (yield* Effect.promise(() => import(new URL("biscuit_bg.js", dir).href))) as Module & {
    __wbg_set_wasm: (exports: WebAssembly.Exports) => void
  }
  const wasmBytes = yield* fs.readFile(fileURLToPath(new URL("biscuit_bg.wasm", dir)))
  const module = yield* Effect.promise(() => WebAssembly.compile(new Uint8Array(wasmBytes)))
  const imports: Record<string, WebAssembly.ModuleImports> = {}
  for (const name of new Set(WebAssembly.Module.imports(module).map((i) => i.module))) {
    imports[name] = name === "./biscuit_bg.js" ? glue : yield* Effect.promise(() => import(new URL(name, dir).href))
  }
  const instance = yield* Effect.promise(() => WebAssembly.instantiate(module, imports))
  glue.__wbg_set_wasm(instance.exports)
  ;(instance.exports.__wbindgen_start as () => void)()
  return glue
}).pipe(Effect.provide(NodeFileSystem.layer))

// The glue module is one per process and caches views of its instance's memory, so a second
// instance would corrupt it: the package is loaded once, whoever asks first.
let loaded: Promise<Module> | undefined
const loadOnce: Effect.Effect<Module> = Effect.promise(() => (loaded ??= Effect.runPromise(load)))

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace(".000Z", "Z")

/** Where the leaf block's signature starts: the last `blocks` entry (field 3) of the Biscuit
 * message, or `authority` (field 2) when there is none; inside it, `signature` (field 3). */
const leafSignatureAt = (bytes: Uint8Array): number => {
  const fields = (from: number, to: number): Array<{ field: number; start: number; end: number }> => {
    const out: Array<{ field: number; start: number; end: number }> = []
    let i = from
    const varint = (): number => {
      let v = 0
      for (let shift = 0; ; shift += 7) {
        const b = bytes[i++]
        v += (b & 0x7f) * 2 ** shift
        if (b < 0x80) return v
      }
    }
    while (i < to) {
      const tag = varint()
      const wire = tag & 7
      if (wire === 0) varint()
      else if (wire === 2) {
        const len = varint()
        out.push({ field: tag >>> 3, start: i, end: i + len })
        i += len
      } else if (wire === 1) i += 8
      else if (wire === 5) i += 4
      else throw new Error(`protobuf wire type ${wire} in a biscuit`)
    }
    return out
  }
  const top = fields(0, bytes.length)
  const leaf = top.filter((f) => f.field === 3).pop() ?? top.find((f) => f.field === 2)
  const sig = leaf === undefined ? undefined : fields(leaf.start, leaf.end).find((f) => f.field === 3)
  if (sig === undefined) throw new Error("no leaf signature in the biscuit")
  return sig.start
}

export const makeBiscuit = Effect.gen(function* () {
  const B = yield* loadOnce
  const rootPrivate = B.PrivateKey.fromBytes(KEYS[0].seed, B.SignatureAlgorithm.Ed25519)
  const rootPublic = B.KeyPair.fromPrivateKey(rootPrivate).getPublicKey()
  // The verifier's side, built once (a server keeps its policy): the request's facts and policy.
  // An AuthorizerBuilder is consumed by `buildAuthenticated`, so each verification merges this
  // template (parsed once) into a new one.
  const policy = new B.AuthorizerBuilder()
  policy.addCode(`time(${iso(NOW)}); operation("travel/book"); amount(100); currency("USD"); date(20270115); allow if right("travel");`)
  // Biscuit's default run limit is 1 ms of datalog, which a valid token exceeds on its first runs
  // (the engine compiles its WebAssembly lazily: 116 ms for the first one here) and on a loaded
  // machine; 1 s stays a bound without refusing good tokens at random. The limit only caps work.
  const limits = { max_facts: 1000, max_iterations: 100, max_time_micro: 1_000_000 }

  const peer: Peer = {
    name: "biscuit-wasm",
    sync: true,
    build: async (n, c, leafAmount) => {
      const root = B.Biscuit.builder()
      root.addCode(
        `right("travel"); nonce("${nonceOf("biscuit", n, c, 0)}");
         check if operation($op), $op.starts_with("travel");
         check if amount($a), $a <= ${amountOf(0, n, leafAmount)};
         check if currency($c), {"USD", "EUR"}.contains($c);
         check if date($d), $d >= 20270101, $d <= 20270131;
         check if time($t), $t < ${iso(expOf(0))};`
      )
      let token = root.build(rootPrivate)
      for (let i = 1; i < n; i++) {
        const block = B.Biscuit.block_builder()
        block.addCode(`nonce("${nonceOf("biscuit", n, c, i)}"); check if amount($a), $a <= ${amountOf(i, n, leafAmount)}; check if time($t), $t < ${iso(expOf(i))};`)
        token = token.appendBlock(block)
      }
      const bytes = token.toBytes()
      token.free()
      const nonce = ascii(nonceOf("biscuit", n, c, n - 1))
      return { bytes, sigAt: leafSignatureAt(bytes) + 32, payloadAt: offsetIn(bytes, nonce, nonce.length >> 1) }
    },
    verify: (bytes) => {
      let token: Token | undefined
      let authorizer: Authorizer | undefined
      try {
        token = B.Biscuit.fromBytes(bytes, rootPublic)
        const builder = new B.AuthorizerBuilder()
        builder.merge(policy)
        authorizer = builder.buildAuthenticated(token)
        authorizer.authorizeWithLimits(limits)
      } catch (e) {
        // The library throws plain objects describing the failure.
        throw new Error(e instanceof Error ? e.message : JSON.stringify(e))
      } finally {
        authorizer?.free()
        token?.free()
      }
    }
  }
  return peer
})
