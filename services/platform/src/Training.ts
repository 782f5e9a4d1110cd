/**
 * The assistant's demo training materials. The assistant ingests training materials from a git
 * repository (`TRAINING_MATERIALS_REPO`, its own sync: changed files ingested again, removed
 * ones dropped, unchanged ones left alone), so the launcher keeps a small local repository of
 * the Markdown documents under `examples/assistant/` in the data directory and commits them when
 * they changed. The assistant then syncs it at start like any other repository.
 *
 * Without a `git` binary the assistant starts without training materials and the launcher says so.
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { exampleTrainingMaterials } from "./Config.js"

/** git with no user or system configuration (a developer's hooks or signing must not apply). */
const git = (cwd: string, args: ReadonlyArray<string>) =>
  spawnSync("git", [
    "-c", "user.name=REC platform launcher",
    "-c", "user.email=launcher@rec.example",
    "-c", "commit.gpgsign=false",
    "-c", "core.hooksPath=/dev/null",
    ...args
  ], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0" },
    timeout: 20_000
  })

const markdownIn = (dir: string): ReadonlyArray<string> =>
  fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".md")).sort() : []

/**
 * Copies `source`'s Markdown into the repository at `repository` and commits what changed. Returns
 * the repository, or `undefined` (logged) when git is missing or fails.
 */
export const prepare = (repository: string, source: string = exampleTrainingMaterials): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    const files = markdownIn(source)
    if (files.length === 0) {
      yield* Effect.logWarning(`no training materials in ${source}; the assistant starts without any`)
      return undefined
    }
    const outcome = yield* Effect.sync(() => {
      fs.mkdirSync(repository, { recursive: true })
      if (!fs.existsSync(path.join(repository, ".git"))) {
        const init = git(repository, ["init", "--quiet", "--initial-branch=main"])
        if (init.error !== undefined || init.status !== 0) return { error: String(init.error?.message ?? init.stderr).trim() }
      }
      // The repository mirrors the examples: removed documents are removed from it too.
      for (const old of markdownIn(repository)) if (!files.includes(old)) fs.rmSync(path.join(repository, old))
      for (const file of files) {
        const bytes = fs.readFileSync(path.join(source, file))
        const target = path.join(repository, file)
        if (!fs.existsSync(target) || !fs.readFileSync(target).equals(bytes)) fs.writeFileSync(target, bytes)
      }
      const add = git(repository, ["add", "--all"])
      if (add.status !== 0) return { error: add.stderr.trim() }
      const status = git(repository, ["status", "--porcelain"])
      if (status.stdout.trim() === "") return { committed: false }
      const commit = git(repository, ["commit", "--quiet", "-m", "Training materials from examples/assistant"])
      return commit.status === 0 ? { committed: true } : { error: commit.stderr.trim() }
    })
    if ("error" in outcome) {
      yield* Effect.logWarning(`the assistant starts without training materials: git failed (${outcome.error})`)
      return undefined
    }
    if (outcome.committed) yield* Effect.logInfo(`training materials updated in ${repository} (${files.length} documents)`)
    return repository
  })
