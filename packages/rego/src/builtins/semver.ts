// semver.is_valid and semver.compare (SemVer 2.0.0, an optional leading "v" accepted, as OPA).

import { str } from "./args.js"
import { type BuiltinDef, builtinError } from "./registry.js"

interface Version {
  major: bigint
  minor: bigint
  patch: bigint
  pre: string
}

const IDENT = /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/
const INT64 = /^[+-]?\d+$/
const MAX = (1n << 63n) - 1n

const cut = (s: string, sep: string): [string, string] => {
  const i = s.indexOf(sep)
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)]
}

const parseInt64 = (s: string): bigint | undefined => {
  if (!INT64.test(s)) return undefined
  const v = BigInt(s)
  return v > MAX || v < -MAX - 1n ? undefined : v
}

export const parseSemver = (version: string): Version | undefined => {
  const [rest, meta] = cut(version.startsWith("v") ? version.slice(1) : version, "+")
  if (meta !== "" && !IDENT.test(meta)) return undefined
  const [core, pre] = cut(rest, "-")
  if (pre !== "" && !IDENT.test(pre)) return undefined
  const parts = core.split(".")
  if (parts.length !== 3) return undefined
  const [major, minor, patch] = parts.map(parseInt64)
  if (major === undefined || minor === undefined || patch === undefined) return undefined
  return { major, minor, patch, pre }
}

const isAllDecimals = (s: string): boolean => /^[0-9]+$/.test(s)

const cmp = (a: bigint | string, b: bigint | string): number => (a > b ? 1 : a < b ? -1 : 0)

export const compareSemver = (v: Version, o: Version): number => {
  const c = cmp(v.major, o.major) || cmp(v.minor, o.minor) || cmp(v.patch, o.patch)
  if (c !== 0) return c
  if (v.pre === o.pre) return 0
  if (v.pre === "") return 1
  if (o.pre === "") return -1
  const as = v.pre.split(".")
  const bs = o.pre.split(".")
  for (let i = 0; ; i++) {
    if (i >= as.length && i < bs.length) return -1
    if (i < as.length && i >= bs.length) return 1
    if (i >= as.length) return 0
    const a = as[i]
    const b = bs[i]
    const an = isAllDecimals(a)
    const bn = isAllDecimals(b)
    if (an && !bn) return -1
    if (!an && bn) return 1
    const r = an && bn ? cmp(BigInt(a), BigInt(b)) : cmp(a, b)
    if (r !== 0) return r
  }
}

export const semver: BuiltinDef[] = [
  { name: "semver.is_valid", arity: 1, fn: ([x]) => typeof x === "string" && parseSemver(x) !== undefined },
  {
    name: "semver.compare",
    arity: 2,
    fn: ([a, b]) => {
      const x = str(a, 1)
      const y = str(b, 2)
      const va = parseSemver(x)
      if (va === undefined) throw builtinError(`operand 1: string ${JSON.stringify(x)} is not a valid SemVer`)
      const vb = parseSemver(y)
      if (vb === undefined) throw builtinError(`operand 2: string ${JSON.stringify(y)} is not a valid SemVer`)
      return compareSemver(va, vb)
    }
  }
]
