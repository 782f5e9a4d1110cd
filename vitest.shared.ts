// Shared Vitest settings for every workspace package (`project(...)` in each package's
// vitest.config.ts).
//
// A package's tests see its own sources: `@rec/<itself>` and `@rec/<itself>/<module>` point at
// `src/`, as its relative imports do. Every other workspace package is loaded as Node loads it
// in production, from its built `dist/`, natively: Vitest would otherwise transform and evaluate
// each of their hundreds of modules again in every test file's fresh process, which was about
// half of the suite's time (docs/decisions.md, "The suite loads other packages from dist").
// `npm test` builds first; when running Vitest by hand after changing another package, build
// (`pnpm build`, or `tsc -b --watch`), or set REC_TEST_SOURCES=1 to load every workspace package
// from its sources as before.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"
import { defineProject, mergeConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

const workspacePackages: ReadonlyArray<{ name: string; dir: string }> =
  ["packages", "services"].flatMap((group) => {
    const base = path.join(root, group)
    if (!fs.existsSync(base)) return []
    return fs.readdirSync(base).flatMap((entry) => {
      const manifest = path.join(base, entry, "package.json")
      if (!fs.existsSync(manifest)) return []
      const { name } = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name: string }
      return [{ name, dir: path.join(base, entry) }]
    })
  })

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

const sourceAliases = (packages: ReadonlyArray<{ name: string; dir: string }>) =>
  packages.flatMap(({ dir, name }) => [
    { find: new RegExp(`^${escape(name)}$`), replacement: path.join(dir, "src", "index.ts") },
    { find: new RegExp(`^${escape(name)}/(.*)$`), replacement: path.join(dir, "src", "$1.ts") }
  ])

const fromSources = process.env["REC_TEST_SOURCES"] === "1"

/** The Vitest project of the workspace package whose `vitest.config.ts` is at `configUrl`. */
export const project = (name: string, configUrl: string): ViteUserConfig => {
  const dir = path.dirname(fileURLToPath(configUrl))
  const own = workspacePackages.filter((p) => p.dir === dir)
  return mergeConfig(
    {
      resolve: { alias: sourceAliases(fromSources ? workspacePackages : own) },
      test: {
        include: ["test/**/*.test.ts"],
        testTimeout: 30_000,
        hookTimeout: 60_000,
        pool: "forks",
        sequence: { concurrent: false },
        // The other packages' built modules are imported by Node itself, not through Vitest.
        ...(fromSources ? {} : { server: { deps: { external: [/\/(packages|services)\/[^/]+\/dist\//] } } })
      }
    } satisfies ViteUserConfig,
    defineProject({ test: { name } })
  )
}
