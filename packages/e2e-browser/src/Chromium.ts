/**
 * Debian's Chromium (`apt-get install chromium`), driven by `playwright-core`. Playwright's own
 * browser downloads are never used (`playwright install` needs the Internet and pins a build
 * the distribution does not ship); the machine's Chromium is found at `CHROMIUM_PATH`,
 * `/usr/bin/chromium` or on `PATH`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

/**
 * Flags of every launch: no sandbox (CI runs as root in a container), no GPU, and nothing that
 * reaches out on its own (QUIC probes, component updates, sync, first-run pages), so every
 * request a test sees comes from the page under test.
 */
export const launchArgs: ReadonlyArray<string> = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

const isExecutable = (file: string): boolean => {
  try {
    Fs.accessSync(file, Fs.constants.X_OK)
    return Fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** The Chromium executable, or `undefined` when the machine has none. */
export const findExecutable = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const explicit = env["CHROMIUM_PATH"]?.trim()
  if (explicit) return isExecutable(explicit) ? explicit : undefined
  if (isExecutable("/usr/bin/chromium")) return "/usr/bin/chromium"
  for (const dir of (env["PATH"] ?? "").split(Path.delimiter)) {
    if (dir === "") continue
    for (const name of ["chromium", "chromium-browser"]) {
      const candidate = Path.join(dir, name)
      if (isExecutable(candidate)) return candidate
    }
  }
  return undefined
}

/** `REC_REQUIRE_SERVICES=1` (CI): a missing browser is a failure, not a skip. */
export const required = (env: NodeJS.ProcessEnv = process.env): boolean => env["REC_REQUIRE_SERVICES"] === "1"

/**
 * Why browser tests must be skipped, or `undefined` when Chromium is installed. Throws instead
 * of returning a reason when `REC_REQUIRE_SERVICES=1`. Meant for a top-level `await` in a test file.
 */
export const skipReason = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  if (findExecutable(env) !== undefined) return undefined
  const reason = env["CHROMIUM_PATH"]
    ? `CHROMIUM_PATH=${env["CHROMIUM_PATH"]} is not an executable file`
    : "Chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH); .ci/run installs it"
  if (required(env)) throw new Error(`${reason} (REC_REQUIRE_SERVICES=1)`)
  return reason
}

export interface Browser {
  readonly context: BrowserContext
  /** The fresh profile directory (`--user-data-dir`), removed by `close`. */
  readonly userDataDir: string
  readonly close: () => Promise<void>
}

/**
 * Headless Chromium with a fresh profile in a temporary directory (Playwright passes it as
 * `--user-data-dir`), so no cache, cookie or service worker of an earlier run can hide a
 * failing request.
 */
export const launch = async (executablePath: string): Promise<Browser> => {
  const userDataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "rec-e2e-browser-"))
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: [...launchArgs],
      viewport: { width: 1280, height: 900 },
      timeout: 60_000
    })
    return {
      context,
      userDataDir,
      close: async () => {
        await context.close().catch(() => undefined)
        Fs.rmSync(userDataDir, { recursive: true, force: true })
      }
    }
  } catch (error) {
    Fs.rmSync(userDataDir, { recursive: true, force: true })
    throw error
  }
}
