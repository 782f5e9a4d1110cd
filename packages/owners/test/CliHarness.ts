/**
 * Runs the `owners` command in-process, with the real file system and HTTP client, the given
 * environment as its only configuration, and its output captured.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ConfigProvider, Effect, Layer } from "effect"
import { CliOutput, runCli } from "../src/Commands.js"

export interface CliRun {
  readonly code: number
  readonly out: string
  readonly err: string
}

export const runCommand = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const output = Layer.succeed(CliOutput, {
      out: (text) => Effect.sync(() => void out.push(text)),
      err: (text) => Effect.sync(() => void err.push(text))
    })
    const code = yield* runCli(args).pipe(
      Effect.provide(Layer.mergeAll(output, NodeFileSystem.layer, NodeHttpClient.layerUndici)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
    )
    return { code, out: out.join("\n"), err: err.join("\n") }
  })
