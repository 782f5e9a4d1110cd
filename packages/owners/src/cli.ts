/**
 * Entry point of the `owners` binary (`bin/owners.js`). See `Commands.ts` for the commands.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { CliOutput, ExitCode, runCli } from "./Commands.js"

const program = runCli(process.argv.slice(2)).pipe(
  Effect.provide(Layer.mergeAll(CliOutput.process, NodeFileSystem.layer, NodeHttpClient.layerUndici)),
  // The command prints its own results; only warnings and errors from libraries show.
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : ExitCode.failed)
})
