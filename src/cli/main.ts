// The `mandate` bin: runs the command line (run.ts) with this process's streams, environment and
// exit status, under NodeRuntime.runMain so that SIGINT and SIGTERM interrupt the running command
// (a server closes its scope: its store, its port) before the process ends.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { runArgs } from "./run.js"

runArgs(process.argv.slice(2)).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
