/**
 * The `git` binary, for the training-materials checkout. Only local paths and `https` URLs are
 * accepted as the repository (`GIT_ALLOW_PROTOCOL=file:https` also holds for submodules and
 * redirects); git never prompts (`GIT_TERMINAL_PROMPT=0`), reads no system or global
 * configuration, and every command has a time limit. Refs are resolved to a commit id before
 * they reach a command line, so a ref can never be read as an option.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodePath from "node:path"

export class GitFailed extends Schema.TaggedError<GitFailed>()("GitFailed", {
  /** The git subcommand: clone, fetch, checkout... */
  operation: Schema.String,
  /** git's own words (credentials in URLs removed). */
  message: Schema.String
}) {}

export type Repository =
  | { readonly _tag: "Local"; readonly path: string }
  | { readonly _tag: "Https"; readonly url: string }

/** A URL without its user information, for messages and logs. */
export const redact = (text: string): string => text.replace(/(https?:\/\/)[^/@\s]+@/gi, "$1***@")

/** A local path or an https URL; `undefined` for anything else (ssh, git://, file://, ext::...). */
export const parseRepository = (value: string, cwd: string = process.cwd()): Repository | undefined => {
  const trimmed = value.trim()
  if (/^https:\/\/[^\s]+$/i.test(trimmed)) {
    try {
      const url = new URL(trimmed)
      return url.protocol === "https:" && url.hostname !== "" ? { _tag: "Https", url: trimmed } : undefined
    } catch {
      return undefined
    }
  }
  // A colon before the first slash is a scheme (`x://`, `x::`) or scp-like `[user@]host:path`:
  // another protocol, as git reads it (a Windows drive letter is a path).
  const colon = trimmed.indexOf(":")
  const slash = trimmed.search(/[\\/]/)
  if (colon !== -1 && (slash === -1 || colon < slash) && !/^[A-Za-z]:[\\/]/.test(trimmed)) return undefined
  if (trimmed === "" || trimmed.startsWith("-")) return undefined
  return { _tag: "Local", path: NodePath.resolve(cwd, trimmed) }
}

export const repositoryArgument = (repository: Repository): string => (repository._tag === "Local" ? repository.path : repository.url)

const environment = {
  GIT_ALLOW_PROTOCOL: "file:https",
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ASKPASS: "/bin/false",
  LC_ALL: "C"
}

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.runFold("", (acc, s) => (acc.length > 64_000 ? acc : acc + s)),
    Effect.orElseSucceed(() => "")
  )

/** Runs `git <args>` in `cwd`; stdout, or `GitFailed` with git's stderr. */
export const run = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string | undefined; readonly timeout?: Duration.DurationInput | undefined } = {}
): Effect.Effect<string, GitFailed, CommandExecutor.CommandExecutor> => {
  const operation = args.find((a) => !a.startsWith("-") && !a.includes("=")) ?? "git"
  let command = Command.make("git", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", ...args).pipe(
    Command.env(environment)
  )
  if (options.cwd !== undefined) command = Command.workingDirectory(command, options.cwd)
  const timeout = Duration.decode(options.timeout ?? Duration.minutes(5))
  return Effect.scoped(Effect.gen(function*() {
    const process = yield* Command.start(command)
    const [stdout, stderr, code] = yield* Effect.all([collect(process.stdout), collect(process.stderr), process.exitCode], {
      concurrency: 3
    })
    if (code !== 0) {
      return yield* new GitFailed({ operation, message: redact(stderr.trim() || `git ${operation} exited with code ${code}`) })
    }
    return stdout
  })).pipe(
    Effect.catchTag("SystemError", (e) => Effect.fail(new GitFailed({ operation, message: `git could not be run: ${e.message}` }))),
    Effect.catchTag("BadArgument", (e) => Effect.fail(new GitFailed({ operation, message: e.message }))),
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () => new GitFailed({ operation, message: `git ${operation} took longer than ${Duration.format(timeout)}` })
    }),
    Effect.withSpan("Git.run", { attributes: { operation } })
  )
}
