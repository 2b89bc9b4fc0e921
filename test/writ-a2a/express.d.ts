// The members of Express the A2A SDK-server tests use. Express is the SDK server's peer dependency
// and is installed without type declarations; these are what sdk.integration.test.ts calls.
declare module "express" {
  import type { Server } from "node:http"
  namespace express {
    interface Express {
      use(path: string, handler: unknown): Express
      listen(port: number, host: string, callback: () => void): Server
    }
  }
  function express(): express.Express
  export default express
}
