// uuid.rfc4122 (random v4, stable per key within one evaluation) and uuid.parse.

import { type PlainObject } from "../value.js"
import { str } from "./args.js"
import type { BuiltinDef } from "./registry.js"

const hex = (b: Uint8Array, from: number, to: number): string => {
  let s = ""
  for (let i = from; i < to; i++) s += b[i].toString(16).padStart(2, "0")
  return s
}

export const randomBytes = (n: number): Uint8Array => {
  const b = new Uint8Array(n)
  globalThis.crypto.getRandomValues(b)
  return b
}

/** google/uuid Parse: 36 chars, {36}, urn:uuid:36, or 32 hex digits. */
const parseUUID = (s: string): Uint8Array | undefined => {
  let t: string
  if (s.length === 36) t = s
  else if (s.length === 45 && s.slice(0, 9).toLowerCase() === "urn:uuid:") t = s.slice(9)
  else if (s.length === 38 && s[0] === "{" && s[37] === "}") t = s.slice(1, 37)
  else if (s.length === 32) {
    if (!/^[0-9a-fA-F]{32}$/.test(s)) return undefined
    t = `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`
  } else return undefined
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(t)) return undefined
  const h = t.replaceAll("-", "")
  const b = new Uint8Array(16)
  for (let i = 0; i < 16; i++) b[i] = parseInt(h.slice(i * 2, i * 2 + 2), 16)
  return b
}

const variant = (b: number): string => ((b & 0xc0) === 0x80 ? "RFC4122" : (b & 0xe0) === 0xc0 ? "Microsoft" : (b & 0xe0) === 0xe0 ? "Future" : "Reserved")

const macVars = (b: number): string => ((b & 3) === 3 ? "local:multicast" : (b & 1) === 1 ? "global:multicast" : (b & 2) === 2 ? "local:unicast" : "global:unicast")

const be = (b: Uint8Array, from: number, n: number): bigint => {
  let x = 0n
  for (let i = from; i < from + n; i++) x = (x << 8n) | BigInt(b[i])
  return x
}

const G1582NS100 = 122192928000000000n

export const uuid: BuiltinDef[] = [
  {
    name: "uuid.rfc4122",
    arity: 1,
    nondeterministic: true,
    fn: ([k], ctx) => {
      const key = `uuid.rfc4122/${str(k, 1)}`
      const cached = ctx.cache.get(key)
      if (typeof cached === "string") return cached
      const b = randomBytes(16)
      b[8] = (b[8] & 0x3f) | 0x80
      b[6] = (b[6] & 0x0f) | 0x40
      const s = `${hex(b, 0, 4)}-${hex(b, 4, 6)}-${hex(b, 6, 8)}-${hex(b, 8, 10)}-${hex(b, 10, 16)}`
      ctx.cache.set(key, s)
      return s
    }
  },
  {
    name: "uuid.parse",
    arity: 1,
    fn: ([x]) => {
      const b = parseUUID(str(x, 1))
      if (b === undefined) return undefined
      const version = b[6] >> 4
      const out: PlainObject = { variant: variant(b[8]), version }
      if (version === 1 || version === 2) {
        const t = be(b, 0, 4) | (be(b, 4, 2) << 32n) | ((be(b, 6, 2) & 0xfffn) << 48n)
        const ns = (t - G1582NS100) * 100n
        out.time = Number.isSafeInteger(Number(ns)) ? Number(ns) : ns
        out.nodeid = Array.from(b.slice(10, 16), (x) => x.toString(16).padStart(2, "0")).join("-")
        out.macvariables = macVars(b[10])
        out.clocksequence = Number(be(b, 8, 2) & 0x3fffn)
        if (version === 2) {
          out.id = Number(be(b, 0, 4))
          const d = b[9]
          out.domain = d === 0 ? "Person" : d === 1 ? "Group" : d === 2 ? "Org" : `Domain${d}`
        }
      }
      return out
    }
  }
]
