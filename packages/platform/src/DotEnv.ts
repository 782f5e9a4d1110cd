/**
 * `.env` files. The spec's services read their settings "from environment variables or a `.env`
 * file"; `ServiceKit.run` calls `load` before anything reads the configuration, so every `Config`
 * of every service (and the kit's misspelling check) sees the file's variables as environment.
 *
 * - The file is `ENV_FILE` when set, else `.env` in the working directory; a missing `.env` is
 *   normal (nothing is loaded), a missing `ENV_FILE` is an error (it was asked for).
 * - The environment wins: a variable already set is never replaced by the file's value (as
 *   `node --env-file`, python-dotenv and pydantic-settings do), so a deployment can override a
 *   committed `.env` one variable at a time.
 * - Syntax is Node's own (`util.parseEnv`): `KEY=value`, `export KEY=value`, single, double and
 *   back quotes (double quotes expand `\n`), `#` comments.
 * - Only names are reported (the start-up log line); values may be secrets.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as util from "node:util"

export interface LoadResult {
  /** The file read, or `undefined` when there was none. */
  readonly file: string | undefined
  /** Names set from the file. */
  readonly loaded: ReadonlyArray<string>
  /** Names the file has but the environment already set (the environment's value kept). */
  readonly overridden: ReadonlyArray<string>
}

export class DotEnvError extends Error {
  readonly _tag = "DotEnvError"
}

export interface LoadOptions {
  /** The environment to read `ENV_FILE` from and to fill (default `process.env`). */
  readonly env?: Record<string, string | undefined> | undefined
  /** Directory a relative file is resolved against (default the working directory). */
  readonly cwd?: string | undefined
}

/** Parses `.env` text (Node's `util.parseEnv`). */
export const parse = (text: string): Record<string, string> => util.parseEnv(text) as Record<string, string>

/**
 * Reads the `.env` file into `env` without replacing variables it already has. Throws
 * `DotEnvError` when `ENV_FILE` names a file that cannot be read.
 */
export const load = (options: LoadOptions = {}): LoadResult => {
  const env = options.env ?? process.env
  const cwd = options.cwd ?? process.cwd()
  const explicit = env["ENV_FILE"]?.trim()
  const file = path.resolve(cwd, explicit === undefined || explicit === "" ? ".env" : explicit)
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (cause) {
    const code = (cause as { code?: unknown }).code
    if ((explicit === undefined || explicit === "") && (code === "ENOENT" || code === "EISDIR")) {
      return { file: undefined, loaded: [], overridden: [] }
    }
    throw new DotEnvError(`ENV_FILE ${file} cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  const loaded: Array<string> = []
  const overridden: Array<string> = []
  for (const [name, value] of Object.entries(parse(text))) {
    if (env[name] !== undefined) overridden.push(name)
    else {
      env[name] = value
      loaded.push(name)
    }
  }
  return { file, loaded, overridden }
}
