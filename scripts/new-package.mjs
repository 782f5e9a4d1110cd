#!/usr/bin/env node
// Scaffolds a workspace package with the layout every package shares:
//   node scripts/new-package.mjs packages <name> "<description>"
//   node scripts/new-package.mjs services <name> "<description>"
import * as fs from "node:fs"
import * as path from "node:path"
import { root, syncPackageTsconfigs, syncRootTsconfigs } from "./workspace.mjs"

const [group, name, description = ""] = process.argv.slice(2)
if (!["packages", "services"].includes(group) || !name) {
  console.error('usage: node scripts/new-package.mjs packages|services <name> "<description>"')
  process.exit(2)
}
const dir = path.join(root, group, name)
if (fs.existsSync(path.join(dir, "package.json"))) {
  console.error(`${group}/${name} already exists`)
  process.exit(1)
}
const pkgName = group === "services" ? `@rec/${name}-service` : `@rec/${name}`
const write = (file, content) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
  fs.writeFileSync(path.join(dir, file), typeof content === "string" ? content : JSON.stringify(content, null, 2) + "\n")
}
write("package.json", {
  name: pkgName,
  version: "0.1.0",
  private: true,
  type: "module",
  description,
  license: "Apache-2.0",
  exports: {
    ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
    "./*": { types: "./dist/*.d.ts", default: "./dist/*.js" }
  },
  scripts: group === "services" ? { start: "node dist/main.js" } : {},
  dependencies: {},
  devDependencies: {}
})
write("tsconfig.json", { files: [], references: [{ path: "./tsconfig.src.json" }, { path: "./tsconfig.test.json" }] })
write("tsconfig.src.json", {
  extends: "../../tsconfig.base.json",
  include: ["src"],
  compilerOptions: { rootDir: "src", outDir: "dist", tsBuildInfoFile: ".tsbuild/src.tsbuildinfo" }
})
write("tsconfig.test.json", {
  extends: "../../tsconfig.base.json",
  include: ["test"],
  references: [{ path: "./tsconfig.src.json" }],
  compilerOptions: {
    rootDir: "test",
    outDir: ".tsbuild/test",
    tsBuildInfoFile: ".tsbuild/test.tsbuildinfo",
    emitDeclarationOnly: true
  }
})
write(
  "vitest.config.ts",
  `import { project } from "../../vitest.shared.js"

export default project("${pkgName}", import.meta.url)
`
)
syncRootTsconfigs()
syncPackageTsconfigs()
console.log(`created ${group}/${name} (${pkgName})`)
