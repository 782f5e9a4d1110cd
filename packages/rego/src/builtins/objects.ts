// Object builtins (object.*) and the JSON document helpers json.filter, json.remove, json.patch.

import { getKey } from "../eval/navigate.js"
import { type RegoObject, type Value, equals, isObject, ObjectBuilder, objectEach, objectGet, objectHas, objectKeys, objectSize, RegoSet, compare } from "../value.js"
import { arr, obj } from "./args.js"
import { type BuiltinDef, BuiltinError, elementTypeError, operandError, typeError } from "./registry.js"

const mergeWithOverwrite = (a: RegoObject, b: RegoObject): RegoObject => {
  const out = new ObjectBuilder()
  objectEach(a, (k, v) => (out.set(k, v), false))
  objectEach(b, (k, v) => {
    const prev = objectGet(a, k)
    out.set(k, prev !== undefined && isObject(prev) && isObject(v) ? mergeWithOverwrite(prev, v) : v)
    return false
  })
  return out.build()
}

/** Keys given as an array, set or object (object.remove / object.filter operand 2). */
const keysParam = (v: Value): RegoSet => {
  if (Array.isArray(v)) return RegoSet.of(v)
  if (v instanceof RegoSet) return v
  if (isObject(v)) return RegoSet.of(objectKeys(v))
  throw typeError(2, v, "object", "set", "array")
}

/** OPA's Object.Filter: keeps the parts of o selected by the filter tree (null = keep all). */
const filterValue = (o: Value, filter: Value): Value => {
  if (filter === null) return o
  if (!isObject(filter)) throw new BuiltinError("eval_builtin_error", `invalid filter value, expected an object`)
  if (typeof o !== "object" || o === null) return o
  if (Array.isArray(o)) {
    const out: Value[] = []
    for (let i = 0; i < o.length; i++) {
      const sub = objectGet(filter, String(i))
      if (sub !== undefined) out.push(filterValue(o[i], sub))
    }
    return out
  }
  if (o instanceof RegoSet) {
    const out = new RegoSet()
    for (const t of o.sorted()) {
      const sub = objectGet(filter, t)
      if (sub !== undefined) out.add(filterValue(t, sub))
    }
    return out
  }
  const out = new ObjectBuilder()
  objectEach(o, (k, v) => {
    const sub = objectGet(filter, k)
    if (sub !== undefined) out.set(k, filterValue(v, sub))
    return false
  })
  return out.build()
}

/** JSON pointer strings or arrays of segments (json.filter / json.remove operand 2). */
const jsonPaths = (v: Value): Value[][] => {
  const items = Array.isArray(v) ? v : v instanceof RegoSet ? v.sorted() : undefined
  if (items === undefined) throw typeError(2, v, "set", "array")
  return items.map(parsePath)
}

const parsePath = (p: Value): Value[] => {
  if (typeof p === "string") {
    if (p === "") return []
    return p
      .replace(/^\/+/, "")
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
  }
  if (Array.isArray(p)) return p
  throw operandError(2, `must be one of {set, array} containing string paths or array of path segments but got ${p === null ? "null" : isObject(p) ? "object" : p instanceof RegoSet ? "set" : typeof p === "bigint" ? "number" : typeof p}`)
}

/** A tree of the paths: inner nodes are objects, leaves are null. */
const pathsToObject = (paths: Value[][]): Value => {
  type Node = Map<string, { key: Value; node: Node | null }>
  const root: Node = new Map()
  const keyOf = (k: Value): string => (typeof k === "string" ? "s" + k : JSON.stringify([typeof k, String(k)]))
  for (const path of paths) {
    if (path.length === 0) continue
    let node: Node = root
    let done = false
    for (let i = 0; i < path.length - 1 && !done; i++) {
      const e = node.get(keyOf(path[i]))
      if (e === undefined) {
        const n: Node = new Map()
        node.set(keyOf(path[i]), { key: path[i], node: n })
        node = n
      } else if (e.node === null) done = true
      else node = e.node
    }
    if (!done) node.set(keyOf(path[path.length - 1]), { key: path[path.length - 1], node: null })
  }
  const build = (n: Node): Value => {
    const ob = new ObjectBuilder()
    for (const { key, node } of n.values()) ob.set(key, node === null ? null : build(node))
    return ob.build()
  }
  return build(root)
}

const jsonRemove = (a: Value, b: Value | undefined): Value | undefined => {
  if (b === undefined) return a
  if (b === null) return undefined
  if (!isObject(b)) return a
  if (typeof a !== "object" || a === null) return a
  if (Array.isArray(a)) {
    const out: Value[] = []
    for (let i = 0; i < a.length; i++) {
      const d = jsonRemove(a[i], objectGet(b, String(i)))
      if (d !== undefined) out.push(d)
    }
    return out
  }
  if (a instanceof RegoSet) {
    const out = new RegoSet()
    for (const v of a.sorted()) {
      const d = jsonRemove(v, objectGet(b, v))
      if (d !== undefined) out.add(d)
    }
    return out
  }
  const out = new ObjectBuilder()
  objectEach(a, (k, v) => {
    const d = jsonRemove(v, objectGet(b, k))
    if (d !== undefined) out.set(k, d)
    return false
  })
  return out.build()
}

const objectSubset = (sup: RegoObject, sub: RegoObject): boolean =>
  !objectEach(sub, (k, subV) => {
    const supV = objectGet(sup, k)
    if (supV === undefined) return true
    if (equals(subV, supV)) return false
    if (isObject(supV) && isObject(subV)) return !objectSubset(supV, subV)
    if (supV instanceof RegoSet && subV instanceof RegoSet) return !setSubset(supV, subV)
    if (Array.isArray(supV) && Array.isArray(subV)) return !arraySubset(supV, subV)
    return true
  })

const setSubset = (sup: RegoSet, sub: RegoSet): boolean => {
  for (const x of sub.unordered()) if (!sup.has(x)) return false
  return true
}

const arraySubset = (sup: Value[], sub: Value[]): boolean => {
  if (sub.length > sup.length) return false
  outer: for (let start = 0; start + sub.length <= sup.length; start++) {
    for (let j = 0; j < sub.length; j++) if (compare(sup[start + j], sub[j]) !== 0) continue outer
    return true
  }
  return sub.length === 0
}

const arraySetSubset = (sup: Value[], sub: RegoSet): boolean => {
  let unmatched = sub.size
  for (const x of sup) {
    if (sub.has(x)) unmatched--
    if (unmatched === 0) return true
  }
  return false
}

// ---------------------------------------------------------------------------------------------
// JSON Patch (RFC 6902) over Rego values; sets are addressed by element.

class PatchError extends Error {}

const segKey = (container: Value, seg: Value): Value => {
  if (Array.isArray(container)) {
    if (typeof seg === "number") return seg
    if (typeof seg === "string" && /^(0|[1-9]\d*)$/.test(seg)) return Number(seg)
    if (seg === "-") return container.length
    throw new PatchError("invalid array index")
  }
  return seg
}

const getAt = (doc: Value, path: Value[]): Value => {
  let v: Value | undefined = doc
  for (const seg of path) {
    v = v instanceof RegoSet ? (v.has(seg) ? seg : undefined) : getKey(v, segKey(v as Value, seg))
    if (v === undefined) throw new PatchError("path not found")
  }
  return v as Value
}

const updateAt = (doc: Value, path: Value[], f: (parent: Value, key: Value) => Value): Value => {
  if (path.length === 0) throw new PatchError("empty path")
  const [seg, ...rest] = path
  if (rest.length === 0) return f(doc, seg)
  if (Array.isArray(doc)) {
    const i = segKey(doc, seg) as number
    if (i < 0 || i >= doc.length) throw new PatchError("index out of range")
    const out = doc.slice()
    out[i] = updateAt(doc[i], rest, f)
    return out
  }
  if (isObject(doc)) {
    const child = objectGet(doc, seg)
    if (child === undefined) throw new PatchError("path not found")
    const ob = new ObjectBuilder()
    objectEach(doc, (k, v) => (ob.set(k, v), false))
    ob.set(seg, updateAt(child, rest, f))
    return ob.build()
  }
  if (doc instanceof RegoSet) {
    if (!doc.has(seg)) throw new PatchError("path not found")
    const out = new RegoSet()
    for (const x of doc.unordered()) out.add(equals(x, seg) ? updateAt(x, rest, f) : x)
    return out
  }
  throw new PatchError("path not found")
}

const insertAt = (doc: Value, path: Value[], value: Value): Value => {
  if (path.length === 0) return value
  return updateAt(doc, path, (parent, seg) => {
    if (Array.isArray(parent)) {
      const i = segKey(parent, seg) as number
      if (i < 0 || i > parent.length) throw new PatchError("index out of range")
      const out = parent.slice()
      out.splice(i, 0, value)
      return out
    }
    if (isObject(parent)) {
      const ob = new ObjectBuilder()
      objectEach(parent, (k, v) => (ob.set(k, v), false))
      ob.set(seg, value)
      return ob.build()
    }
    if (parent instanceof RegoSet) {
      if (!equals(seg, value)) throw new PatchError("set key does not match value")
      const out = new RegoSet()
      for (const x of parent.unordered()) out.add(x)
      out.add(value)
      return out
    }
    throw new PatchError("cannot insert into a scalar")
  })
}

const deleteAt = (doc: Value, path: Value[]): Value => {
  if (path.length === 0) throw new PatchError("cannot delete the root")
  return updateAt(doc, path, (parent, seg) => {
    if (Array.isArray(parent)) {
      const i = segKey(parent, seg) as number
      if (i < 0 || i >= parent.length) throw new PatchError("index out of range")
      const out = parent.slice()
      out.splice(i, 1)
      return out
    }
    if (isObject(parent)) {
      if (!objectHas(parent, seg)) throw new PatchError("path not found")
      const ob = new ObjectBuilder()
      objectEach(parent, (k, v) => (equals(k, seg) ? false : (ob.set(k, v), false)))
      return ob.build()
    }
    if (parent instanceof RegoSet) {
      if (!parent.has(seg)) throw new PatchError("path not found")
      const out = new RegoSet()
      for (const x of parent.unordered()) if (!equals(x, seg)) out.add(x)
      return out
    }
    throw new PatchError("path not found")
  })
}

const patchPath = (v: Value | undefined): Value[] => {
  if (v === undefined) throw new PatchError("missing path")
  if (typeof v === "string" || Array.isArray(v)) return parsePath(v)
  throw new PatchError("invalid path")
}

const applyPatch = (doc: Value, ops: Value[]): Value => {
  let cur = doc
  for (const op of ops) {
    if (!isObject(op)) throw new PatchError("must be an array of JSON-Patch objects")
    const kind = objectGet(op, "op")
    if (typeof kind !== "string") throw new PatchError("attribute 'op' must be a string")
    const path = patchPath(objectGet(op, "path"))
    const value = objectGet(op, "value")
    switch (kind) {
      case "add":
        if (value === undefined) throw new PatchError("missing value")
        cur = insertAt(cur, path, value)
        break
      case "remove":
        cur = deleteAt(cur, path)
        break
      case "replace":
        if (value === undefined) throw new PatchError("missing value")
        cur = path.length === 0 ? value : insertAt(deleteAt(cur, path), path, value)
        break
      case "move": {
        const from = patchPath(objectGet(op, "from"))
        const chunk = getAt(cur, from)
        cur = insertAt(deleteAt(cur, from), path, chunk)
        break
      }
      case "copy": {
        const from = patchPath(objectGet(op, "from"))
        cur = insertAt(cur, path, getAt(cur, from))
        break
      }
      case "test":
        if (value === undefined || !equals(getAt(cur, path), value)) throw new PatchError("test failed")
        break
      default:
        throw new PatchError(`unrecognized op '${kind}'`)
    }
  }
  return cur
}

/** Top-level size of a collection (elements or keys), 0 for a scalar. */
const sizeOf = (v: Value): number => (Array.isArray(v) ? v.length : v instanceof RegoSet ? v.size : isObject(v) ? objectSize(v) : 0)

/** object.filter and object.remove: the entries whose key is (`listed`) or is not among the keys. */
const keysBuiltin = (name: string, listed: boolean): BuiltinDef => ({
  name,
  arity: 2,
  fn: ([a, b], ctx) => {
    const o = obj(a, 1)
    ctx.charge(objectSize(o))
    const keys = keysParam(b)
    const out = new ObjectBuilder()
    objectEach(o, (k, v) => {
      if (keys.has(k) === listed) out.set(k, v)
      return false
    })
    return out.build()
  }
})

/** json.filter and json.remove: an object and the paths (as a tree) to keep or to remove. */
const jsonPathsBuiltin = (name: string, apply: (o: Value, paths: Value) => Value | undefined): BuiltinDef => ({
  name,
  arity: 2,
  fn: ([a, b], ctx) => {
    const o = obj(a, 1)
    ctx.charge(objectSize(o) + sizeOf(b))
    return apply(o, pathsToObject(jsonPaths(b)))
  }
})

export const objects: BuiltinDef[] = [
  {
    name: "object.union",
    arity: 2,
    fn: ([a, b], ctx) => {
      const x = obj(a, 1)
      const y = obj(b, 2)
      ctx.charge(objectSize(x) + objectSize(y))
      return mergeWithOverwrite(x, y)
    }
  },
  {
    name: "object.union_n",
    arity: 1,
    fn: ([a], ctx) => {
      const xs = arr(a, 1)
      let out: RegoObject = {}
      for (const x of xs) {
        if (!isObject(x)) throw elementTypeError(1, a, x, "object")
        ctx.charge(objectSize(out) + objectSize(x))
        out = mergeWithOverwrite(out, x)
      }
      return out
    }
  },
  keysBuiltin("object.remove", false),
  keysBuiltin("object.filter", true),
  {
    name: "object.get",
    arity: 3,
    fn: ([a, k, d]) => {
      const o = obj(a, 1)
      if (!Array.isArray(k)) {
        const v = objectGet(o, k)
        return v !== undefined ? v : d
      }
      if (k.length === 0) return o
      let v: Value | undefined = o
      for (const seg of k) {
        v = getKey(v, seg)
        if (v === undefined) return d
      }
      return v
    }
  },
  { name: "object.keys", arity: 1, fn: ([a]) => RegoSet.of(objectKeys(obj(a, 1))) },
  {
    name: "object.subset",
    arity: 2,
    fn: ([sup, sub], ctx) => {
      ctx.charge(sizeOf(sup) + sizeOf(sub))
      if (isObject(sup) && isObject(sub)) return objectSubset(sup, sub)
      if (sup instanceof RegoSet && sub instanceof RegoSet) return setSubset(sup, sub)
      if (Array.isArray(sup) && Array.isArray(sub)) return arraySubset(sup, sub)
      if (Array.isArray(sup) && sub instanceof RegoSet) return arraySetSubset(sup, sub)
      throw new BuiltinError("eval_type_error", "both arguments object.subset must be of the same type or array and set")
    }
  },
  jsonPathsBuiltin("json.filter", filterValue),
  jsonPathsBuiltin("json.remove", jsonRemove),
  {
    name: "json.patch",
    arity: 2,
    fn: ([a, b], ctx) => {
      const ops = arr(b, 2)
      // Each operation copies the containers along its path.
      ctx.charge(ops.length * (1 + sizeOf(a)))
      try {
        return applyPatch(a, ops)
      } catch (e) {
        if (e instanceof PatchError) return undefined
        throw e
      }
    }
  }
]


