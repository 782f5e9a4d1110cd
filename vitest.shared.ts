// Shared Vitest settings for every workspace package. Tests import sibling packages by
// name (`@rec/rego`, `@rec/policy-service/Api`); the aliases below point those imports at
// the sources so tests never depend on a stale `dist/`.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

const workspacePackages = (): Array<{ name: string; dir: string }> =>
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

export const aliases = workspacePackages().flatMap(({ name, dir }) => [
  { find: new RegExp(`^${escape(name)}$`), replacement: path.join(dir, "src", "index.ts") },
  { find: new RegExp(`^${escape(name)}/(.*)$`), replacement: path.join(dir, "src", "$1.ts") }
])

export const shared: ViteUserConfig = {
  resolve: { alias: aliases },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    sequence: { concurrent: false }
  }
}
