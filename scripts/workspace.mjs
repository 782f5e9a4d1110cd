// Workspace helpers shared by the repo scripts: list packages, regenerate root tsconfigs.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

export const listPackages = () =>
  ["packages", "services"].flatMap((group) => {
    const base = path.join(root, group)
    if (!fs.existsSync(base)) return []
    return fs
      .readdirSync(base)
      .sort()
      .filter((entry) => fs.existsSync(path.join(base, entry, "package.json")))
      .map((entry) => {
        const dir = path.join(base, entry)
        const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
        return { group, entry, dir, rel: `${group}/${entry}`, manifest }
      })
  })

/** Root tsconfig.json (everything, tests included) and tsconfig.build.json (sources only). */
export const syncRootTsconfigs = () => {
  const pkgs = listPackages()
  const write = (file, refs) =>
    fs.writeFileSync(
      path.join(root, file),
      JSON.stringify({ files: [], references: refs.map((p) => ({ path: p })) }, null, 2) + "\n"
    )
  write("tsconfig.json", pkgs.map((p) => `./${p.rel}`))
  write("tsconfig.build.json", pkgs.map((p) => `./${p.rel}/tsconfig.src.json`))
}

const writeIfChanged = (file, value) => {
  const text = JSON.stringify(value, null, 2) + "\n"
  if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== text) fs.writeFileSync(file, text)
}

/**
 * Project references follow the workspace dependencies declared in each package.json, so
 * `tsc -b` builds packages in dependency order. Run after adding a `workspace:*` dependency.
 */
export const syncPackageTsconfigs = () => {
  const pkgs = listPackages()
  const byName = new Map(pkgs.map((p) => [p.manifest.name, p]))
  for (const p of pkgs) {
    const deps = Object.keys({ ...p.manifest.dependencies, ...p.manifest.devDependencies })
      .filter((d) => byName.has(d) && d !== p.manifest.name)
      .sort()
      .map((d) => path.relative(p.dir, path.join(byName.get(d).dir, "tsconfig.src.json")))
    for (const [file, own] of [["tsconfig.src.json", []], ["tsconfig.test.json", ["./tsconfig.src.json"]]]) {
      const full = path.join(p.dir, file)
      if (!fs.existsSync(full)) continue
      const config = JSON.parse(fs.readFileSync(full, "utf8"))
      const refs = [...own, ...deps].map((r) => ({ path: r }))
      if (refs.length > 0) config.references = refs
      else delete config.references
      writeIfChanged(full, config)
    }
  }
}
