// net.* builtins: CIDR arithmetic on IPv4/IPv6 addresses held as bigints (Go net semantics),
// and net.lookup_ip_addr without DNS: literal addresses and the special-use name "localhost"
// (RFC 6761: always the loopback addresses) resolve locally; other names need a resolver that
// the host supplies (`lookupIpAddr`), since DNS is I/O.

import { type Value, isObject, objectEach, RegoSet } from "../value.js"
import { str } from "./args.js"
import { type BuiltinContext, type BuiltinDef, BuiltinError, builtinError } from "./registry.js"

export interface IP {
  readonly v6: boolean
  readonly n: bigint
}

export interface CIDR {
  readonly v6: boolean
  /** Network address (masked). */
  readonly ip: bigint
  readonly prefix: number
}

const bitsOf = (v6: boolean): number => (v6 ? 128 : 32)

const parseV4 = (s: string): bigint | undefined => {
  const parts = s.split(".")
  if (parts.length !== 4) return undefined
  let n = 0n
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return undefined
    const x = Number(p)
    if (x > 255) return undefined
    n = (n << 8n) | BigInt(x)
  }
  return n
}

const parseV6 = (s: string): bigint | undefined => {
  let tail: bigint | undefined
  let groups = s
  // Embedded IPv4 in the last 32 bits.
  const lastColon = s.lastIndexOf(":")
  if (lastColon >= 0 && s.indexOf(".", lastColon) > lastColon) {
    tail = parseV4(s.slice(lastColon + 1))
    if (tail === undefined) return undefined
    groups = s.slice(0, lastColon + 1) + "0:0"
  }
  const dbl = groups.indexOf("::")
  if (dbl !== groups.lastIndexOf("::")) return undefined
  let parts: string[]
  if (dbl >= 0) {
    const left = groups.slice(0, dbl)
    const right = groups.slice(dbl + 2)
    const l = left === "" ? [] : left.split(":")
    const r = right === "" ? [] : right.split(":")
    if (l.length + r.length > 7) return undefined
    parts = [...l, ...new Array<string>(8 - l.length - r.length).fill("0"), ...r]
  } else {
    parts = groups.split(":")
    if (parts.length !== 8) return undefined
  }
  let n = 0n
  for (const p of parts) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined
    n = (n << 16n) | BigInt(parseInt(p, 16))
  }
  if (tail !== undefined) n = (n & ~0xffffffffn) | tail
  return n
}


/** Go's net.ParseIP; IPv4-mapped IPv6 addresses count as IPv4 (as Go's To4). */
export const parseIP = (s: string): IP | undefined => {
  if (s.includes(".") && !s.includes(":")) {
    const n = parseV4(s)
    return n === undefined ? undefined : { v6: false, n }
  }
  if (!s.includes(":")) return undefined
  const n = parseV6(s)
  if (n === undefined) return undefined
  if (n >> 32n === 0xffffn) return { v6: false, n: n & 0xffffffffn }
  return { v6: true, n }
}

const maskOf = (prefix: number, bits: number): bigint => ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - prefix)) - 1n)

/** Go's net.ParseCIDR. */
export const parseCIDR = (s: string): CIDR => {
  const bad = (): BuiltinError => builtinError(`invalid CIDR address: ${s}`)
  const i = s.indexOf("/")
  if (i < 0) throw bad()
  const addr = s.slice(0, i)
  const pfx = s.slice(i + 1)
  const isV4Text = !addr.includes(":")
  let n: bigint | undefined
  let v6: boolean
  if (isV4Text) {
    n = parseV4(addr)
    v6 = false
  } else {
    n = parseV6(addr)
    v6 = true
  }
  // Go reads the length with dtoi: digits only, leading zeros allowed.
  if (n === undefined || !/^\d+$/.test(pfx)) throw bad()
  let prefix = Number(pfx)
  if (prefix > bitsOf(v6)) throw bad()
  if (v6 && n >> 32n === 0xffffn && prefix >= 96) {
    v6 = false
    n &= 0xffffffffn
    prefix -= 96
  }
  return { v6, ip: n & maskOf(prefix, bitsOf(v6)), prefix }
}

const lastOf = (c: CIDR): bigint => c.ip | ((1n << BigInt(bitsOf(c.v6) - c.prefix)) - 1n)

const containsIP = (c: CIDR, ip: IP): boolean => c.v6 === ip.v6 && (ip.n & maskOf(c.prefix, bitsOf(c.v6))) === c.ip

/** The text of an IPv6 address from its eight 16-bit groups (RFC 5952, as Go writes it). */
export const ipv6Text = (g: readonly number[]): string => {
  // Longest run of two or more zero groups becomes "::" (the first such run on ties).
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j
  }
  const hex = (xs: readonly number[]): string => xs.map((x) => x.toString(16)).join(":")
  if (best < 0) return hex(g)
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`
}

export const formatIP = (ip: IP): string => {
  if (!ip.v6) return [24n, 16n, 8n, 0n].map((s) => String((ip.n >> s) & 0xffn)).join(".")
  const g: number[] = []
  for (let i = 7; i >= 0; i--) g.push(Number((ip.n >> BigInt(i * 16)) & 0xffffn))
  return ipv6Text(g)
}

const formatCIDR = (c: CIDR): string => `${formatIP({ v6: c.v6, n: c.ip })}/${c.prefix}`

const cidrOperand = (v: Value, pos: number): CIDR => parseCIDR(str(v, pos))

const contains = (a: Value, b: Value): boolean => {
  const net = cidrOperand(a, 1)
  const s = str(b, 1)
  const ip = parseIP(s)
  if (ip !== undefined) return containsIP(net, ip)
  let other: CIDR
  try {
    other = parseCIDR(s)
  } catch {
    throw builtinError(`not a valid textual representation of an IP address or CIDR: ${s}`)
  }
  return containsIP(net, { v6: other.v6, n: other.ip }) && containsIP(net, { v6: other.v6, n: lastOf(other) })
}

const matchTerm = (v: Value, pos: number): Value => {
  if (typeof v === "string") return v
  if (Array.isArray(v) && v.length > 0) return v[0]
  throw builtinError(`operand ${pos}: element must be string or non-empty array`)
}

const eachMatch = (pos: number, a: Value, f: (cidr: Value, index: Value) => void): void => {
  if (typeof a === "string") f(a, a)
  else if (Array.isArray(a)) a.forEach((x, i) => f(matchTerm(x, pos), i))
  else if (a instanceof RegoSet) for (const x of a.sorted()) f(matchTerm(x, pos), x)
  else if (isObject(a))
    objectEach(a, (k, v) => {
      f(matchTerm(v, pos), k)
      return false
    })
}

/** Minimal list of CIDRs covering [first, last]. */
const rangeToCIDRs = (v6: boolean, first: bigint, last: bigint): CIDR[] => {
  const bits = bitsOf(v6)
  const out: CIDR[] = []
  let cur = first
  while (cur <= last) {
    let size = 0
    while (size < bits) {
      const block = 1n << BigInt(size + 1)
      if ((cur & (block - 1n)) !== 0n || cur + block - 1n > last) break
      size++
    }
    out.push({ v6, ip: cur, prefix: bits - size })
    cur += 1n << BigInt(size)
  }
  return out
}

/** IPv4 addresses sit in ::ffff:0:0/96 when ranges of both families are sorted together (as Go's net.IP does). */
const V4_MAPPED = 0xffffn << 32n

/** A network to merge: its address range in the IPv6 space and, until merged, its own text. */
interface MergeRange {
  readonly first: bigint
  readonly last: bigint
  readonly text: string | undefined
}

const mergeRange = (c: CIDR, text = formatCIDR(c)): MergeRange => {
  const offset = c.v6 ? 0n : V4_MAPPED
  return { first: c.ip + offset, last: lastOf(c) + offset, text }
}

const isV4Mapped = (n: bigint): boolean => n >> 32n === 0xffffn

/** The previous address, except at the start of the IPv4 or the IPv6 space (cilium's GetPreviousIP). */
const previous = (n: bigint): bigint => (n === 0n || n === V4_MAPPED ? n : n - 1n)

/** OPA's evalNetCIDRMerge: sort by last then first address, merge overlapping or adjacent ranges. */
const merge = (ranges: MergeRange[]): string[] => {
  const rs = [...ranges].sort((a, b) => (a.last < b.last ? -1 : a.last > b.last ? 1 : a.first < b.first ? -1 : a.first > b.first ? 1 : 0))
  for (let i = rs.length - 1; i > 0; i--) {
    if (previous(rs[i].first) <= rs[i - 1].last) {
      const first = rs[i - 1].first < rs[i].first ? rs[i - 1].first : rs[i].first
      rs[i - 1] = { first, last: rs[i].last, text: undefined }
      rs.splice(i, 1)
    }
  }
  const out: string[] = []
  for (const r of rs) {
    if (r.text !== undefined) out.push(r.text)
    else if (isV4Mapped(r.first) && isV4Mapped(r.last)) out.push(...rangeToCIDRs(false, r.first - V4_MAPPED, r.last - V4_MAPPED).map(formatCIDR))
    else out.push(...rangeToCIDRs(true, r.first, r.last).map(formatNetwork))
  }
  return out
}

/** An IPv6 network in Go's notation: one inside ::ffff:0:0/96 prints as IPv4. */
const formatNetwork = (c: CIDR): string => (c.v6 && isV4Mapped(c.ip) && c.prefix >= 96 ? formatCIDR({ v6: false, ip: c.ip - V4_MAPPED, prefix: c.prefix - 96 }) : formatCIDR(c))

/** The classful default prefix OPA gives a bare IPv4 address (net.IP.DefaultMask). */
const defaultPrefix = (ip: IP, text: string): number => {
  const first = Number(ip.n >> 24n)
  if (first < 0x80) return 8
  if (first < 0xc0) return 16
  if (first < 0xe0) return 24
  // Go has no default mask for class D and E addresses, and OPA then prints "<nil>".
  throw builtinError(`IPv4 address without a default mask needs a prefix length: ${text}`)
}

const mergeElement = (v: Value): MergeRange => {
  if (typeof v !== "string") throw builtinError("element must be string")
  const ip = parseIP(v)
  if (ip === undefined) return mergeRange(parseCIDR(v))
  if (ip.v6) throw builtinError("IPv6 invalid: needs prefix length")
  const prefix = defaultPrefix(ip, v)
  // The network keeps the address unmasked (OPA builds it as IPNet{IP, DefaultMask}).
  return mergeRange({ v6: false, ip: ip.n & maskOf(prefix, 32), prefix }, `${formatIP(ip)}/${prefix}`)
}

const expand = (c: CIDR, ctx: BuiltinContext): RegoSet => {
  const last = lastOf(c)
  // Charged up front: a large IPv6 network must hit the step limit before it fills the memory.
  ctx.charge(Number(last - c.ip + 1n))
  const out = new RegoSet()
  for (let n = c.ip; n <= last; n++) out.add(formatIP({ v6: c.v6, n }))
  return out
}

/** Resolves a host name to IP addresses (text); must answer synchronously, e.g. from a cache. */
export type HostResolver = (name: string) => readonly string[]

/** RFC 6761 special-use names whose addresses are fixed: no lookup needed. */
const isLocalhost = (name: string): boolean => {
  const n = name.toLowerCase().replace(/\.$/, "")
  return n === "localhost" || n.endsWith(".localhost")
}

/**
 * net.lookup_ip_addr. Literal addresses and localhost names resolve without I/O; any other name
 * needs `resolve`, which a host supplies to enable DNS:
 * `defaultBuiltins().with(lookupIpAddr((name) => cache.get(name) ?? []))`.
 */
export const lookupIpAddr = (resolve?: HostResolver): BuiltinDef => ({
  name: "net.lookup_ip_addr",
  arity: 1,
  fn: ([a]) => {
    const name = str(a, 1)
    const ip = parseIP(name)
    if (ip !== undefined) return RegoSet.of([formatIP(ip)])
    if (isLocalhost(name)) return RegoSet.of(["127.0.0.1", "::1"])
    // Raised even without strict errors, like every builtin this engine does not provide.
    if (resolve === undefined) throw new BuiltinError("eval_builtin_error", `cannot resolve ${name}: DNS lookups are disabled (a host enables them with a resolver)`, true)
    const out = new RegoSet()
    for (const address of resolve(name)) {
      const parsed = parseIP(address)
      if (parsed === undefined) throw builtinError(`the resolver returned ${JSON.stringify(address)} for ${name}, which is not an IP address`)
      out.add(formatIP(parsed))
    }
    return out
  }
})

export const net: BuiltinDef[] = [
  {
    name: "net.cidr_contains",
    arity: 2,
    fn: ([a, b]) => contains(a, b)
  },
  { name: "net.cidr_overlap", arity: 2, deprecated: true, fn: ([a, b]) => contains(a, b) },
  {
    name: "net.cidr_intersects",
    arity: 2,
    fn: ([a, b]) => {
      const x = cidrOperand(a, 1)
      const y = cidrOperand(b, 1)
      return containsIP(x, { v6: y.v6, n: y.ip }) || containsIP(y, { v6: x.v6, n: x.ip })
    }
  },
  {
    name: "net.cidr_contains_matches",
    arity: 2,
    fn: ([a, b], ctx) => {
      const out = new RegoSet()
      const second: Array<[Value, Value]> = []
      eachMatch(2, b, (c2, i2) => second.push([c2, i2]))
      eachMatch(1, a, (c1, i1) => {
        // Every pair is compared: charged per row, so that the limits hold inside the loop.
        ctx.charge(4 * second.length)
        for (const [c2, i2] of second) if (contains(c1, c2)) out.add([i1, i2])
      })
      return out
    }
  },
  { name: "net.cidr_expand", arity: 1, fn: ([a], ctx) => expand(cidrOperand(a, 1), ctx) },
  {
    name: "net.cidr_is_valid",
    arity: 1,
    fn: ([a]) => {
      if (typeof a !== "string") return false
      try {
        parseCIDR(a)
        return true
      } catch {
        return false
      }
    }
  },
  {
    name: "net.cidr_merge",
    arity: 1,
    fn: ([a]) => {
      let xs: Value[]
      if (Array.isArray(a)) xs = a
      else if (a instanceof RegoSet) xs = a.sorted()
      else throw builtinError("operand must be an array")
      return RegoSet.of(merge(xs.map(mergeElement)))
    }
  },
  lookupIpAddr()
]
