import { NodeRuntime } from "@effect/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { main } from "./SeedCli.js"

// Errors are printed as their message (a seed's problems, one per line), exit code 1.
main().pipe(
  Effect.catchAll((error) => Effect.zipRight(Console.error(error.message), Effect.sync(() => (process.exitCode = 1)))),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
