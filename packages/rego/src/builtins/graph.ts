// walk (a relation: one result per node) and graph.reachable / graph.reachable_paths.

import { type RegoObject, type Value, isObject, objectGet, objectKeys, ObjectMap, RegoSet, sortedKeys } from "../value.js"
import { obj } from "./args.js"
import { type BuiltinContext, type BuiltinDef, typeError } from "./registry.js"

const walkInto = (v: Value, path: Value[], out: Value[], ctx: BuiltinContext): void => {
  // Each result holds its own copy of the path: deep documents cost depth per node.
  ctx.charge(path.length >> 3)
  out.push([path.slice(), v])
  if (Array.isArray(v)) {
    ctx.charge(v.length)
    for (let i = 0; i < v.length; i++) {
      path.push(i)
      walkInto(v[i], path, out, ctx)
      path.pop()
    }
  } else if (v instanceof RegoSet) {
    const xs = v.sorted()
    ctx.charge(xs.length)
    for (const x of xs) {
      path.push(x)
      walkInto(x, path, out, ctx)
      path.pop()
    }
  } else if (isObject(v)) {
    const keys = v instanceof ObjectMap ? objectKeys(v) : sortedKeys(v)
    ctx.charge(keys.length)
    for (const k of keys) {
      path.push(k)
      walkInto(objectGet(v, k) as Value, path, out, ctx)
      path.pop()
    }
  }
}

const vertices = (v: Value): Value[] => (Array.isArray(v) ? v : v instanceof RegoSet ? v.sorted() : [])

const initial = (v: Value): Value[] => {
  if (!Array.isArray(v) && !(v instanceof RegoSet)) throw typeError(2, v, "{array, set}")
  return vertices(v)
}

const reachable = (graph: RegoObject, start: Value[], ctx: BuiltinContext): RegoSet => {
  const reached = new RegoSet()
  const queue = start.slice()
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]
    const edges = objectGet(graph, node)
    if (edges === undefined) continue
    const ns = vertices(edges)
    ctx.charge(ns.length + 1)
    for (const n of ns) if (!reached.has(n)) queue.push(n)
    reached.add(node)
  }
  return reached
}

const pathBuilder = (graph: RegoObject, root: Value, path: Value[], out: RegoSet, reached: RegoSet, ctx: BuiltinContext): void => {
  ctx.charge(1)
  const edges = objectGet(graph, root)
  if (edges === undefined) {
    out.add(path)
    return
  }
  path = [...path, root]
  const ns = vertices(edges)
  if (ns.length === 0) {
    out.add(path)
    return
  }
  // As OPA: the nodes reached are shared by the whole walk below one start edge.
  reached.add(root)
  for (const n of ns) {
    if (reached.has(n)) out.add(path)
    else pathBuilder(graph, n, path, out, reached, ctx)
  }
}

export const graph: BuiltinDef[] = [
  {
    name: "walk",
    arity: 1,
    relation: true,
    fn: ([x], ctx) => {
      const out: Value[] = []
      walkInto(x, [], out, ctx)
      return out
    }
  },
  {
    name: "graph.reachable",
    arity: 2,
    fn: ([g, init], ctx) => reachable(obj(g, 1), initial(init), ctx)
  },
  {
    name: "graph.reachable_paths",
    arity: 2,
    fn: ([g, init], ctx) => {
      const gr = obj(g, 1)
      const out = new RegoSet()
      for (const node of initial(init)) {
        const edges = objectGet(gr, node)
        if (edges === undefined) continue
        const ns = vertices(edges)
        if (ns.length === 0) out.add([node])
        else for (const n of ns) pathBuilder(gr, n, [node], out, RegoSet.of([node]), ctx)
      }
      return out
    }
  }
]
