#!/usr/bin/env node
// Summarises a V8 CPU profile (`node --cpu-prof`, or `run.mjs --cpu-prof`): the functions and
// the source files with the most self time, and, with --inclusive, the functions with the most
// total time (self time plus their callees').
//
//   node bench/service-kit/profile-summary.mjs bench/results/profiles/kit.cpuprofile [--top 40] [--inclusive]
//     [--tree <min %>]   the call tree from the root, nodes above that share of the samples
import * as fs from "node:fs"
import { parseArgs } from "node:util"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: "string", default: "40" },
    inclusive: { type: "boolean", default: false },
    tree: { type: "string" }
  }
})
const top = Number(values.top)
if (positionals.length !== 1) {
  console.error("usage: profile-summary.mjs <file.cpuprofile> [--top N] [--inclusive]")
  process.exit(2)
}
const profile = JSON.parse(fs.readFileSync(positionals[0], "utf8"))

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfTicks = new Map()
for (const id of profile.samples) selfTicks.set(id, (selfTicks.get(id) ?? 0) + 1)
const total = profile.samples.length

const shortFile = (url) =>
  url === ""
    ? "(native)"
    : url.replace(/^file:\/\//, "").replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "").replace(/.*\/work\/main\//, "")
const label = (node) => {
  const f = node.callFrame
  return `${f.functionName || "(anonymous)"} ${shortFile(f.url)}:${f.lineNumber + 1}`
}

const add = (map, key, n) => map.set(key, (map.get(key) ?? 0) + n)
const functions = new Map()
const files = new Map()
for (const [id, ticks] of selfTicks) {
  const node = byId.get(id)
  add(functions, label(node), ticks)
  add(files, shortFile(node.callFrame.url), ticks)
}

const pct = (n) => `${((100 * n) / total).toFixed(1).padStart(5)}%`
const print = (title, map) => {
  console.log(`\n${title}`)
  for (const [key, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(n)}  ${key}`)
}
console.log(`${total} samples`)
print("self time by function", functions)
print("self time by file", files)

if (values.inclusive) {
  // Total time per function: a sample counts once for every distinct function on its stack.
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const inclusive = new Map()
  for (const [id, ticks] of selfTicks) {
    const seen = new Set()
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = label(byId.get(at))
      if (!seen.has(key)) {
        seen.add(key)
        add(inclusive, key, ticks)
      }
    }
  }
  print("total time by function", inclusive)
}

if (values.tree !== undefined) {
  // Top-down: inclusive samples per node, children with the same frame merged.
  const min = (Number(values.tree) / 100) * total
  const inclusiveOf = new Map()
  const sum = (node) => {
    let n = selfTicks.get(node.id) ?? 0
    for (const child of node.children ?? []) n += sum(byId.get(child))
    inclusiveOf.set(node.id, n)
    return n
  }
  const rootNode = profile.nodes[0]
  sum(rootNode)
  console.log(`\ncall tree (nodes >= ${values.tree}%)`)
  const walk = (ids, depth) => {
    const merged = new Map()
    for (const id of ids) {
      const node = byId.get(id)
      const key = label(node)
      const entry = merged.get(key) ?? { n: 0, children: [] }
      entry.n += inclusiveOf.get(id)
      entry.children.push(...(node.children ?? []))
      merged.set(key, entry)
    }
    for (const [key, entry] of [...merged].sort((a, b) => b[1].n - a[1].n)) {
      if (entry.n < min) continue
      console.log(`${pct(entry.n)}  ${"  ".repeat(depth)}${key}`)
      walk(entry.children, depth + 1)
    }
  }
  walk(rootNode.children ?? [], 0)
}
