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

const HEX_POSITIONS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]

const hexValue = (b: number): number => (b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x61 && b <= 0x66 ? b - 0x57 : b >= 0x41 && b <= 0x46 ? b - 0x37 : -1)

/** Two hex digits as a byte, or -1 (google/uuid's xtob). */
const xtob = (hi: number, lo: number): number => {
  const a = hexValue(hi)
  const b = hexValue(lo)
  return a < 0 || b < 0 ? -1 : (a << 4) | b
}

/**
 * google/uuid's Parse, on the UTF-8 bytes as Go sees them: 36 bytes, `urn:uuid:` and 36 bytes,
 * 38 bytes (the first and last are dropped unchecked: braces in practice, but Go only checks
 * the length), or 32 hex digits.
 */
const parseUUID = (s: string): Uint8Array | undefined => {
  const bytes = Buffer.from(s, "utf8")
  let t: Uint8Array
  switch (bytes.length) {
    case 36:
      t = bytes
      break
    case 36 + 9:
      if (bytes.subarray(0, 9).toString("latin1").toLowerCase() !== "urn:uuid:") return undefined
      t = bytes.subarray(9)
      break
    case 36 + 2:
      t = bytes.subarray(1)
      break
    case 32: {
      const out = new Uint8Array(16)
      for (let i = 0; i < 16; i++) {
        const v = xtob(bytes[2 * i], bytes[2 * i + 1])
        if (v < 0) return undefined
        out[i] = v
      }
      return out
    }
    default:
      return undefined
  }
  if (t[8] !== 0x2d || t[13] !== 0x2d || t[18] !== 0x2d || t[23] !== 0x2d) return undefined
  const out = new Uint8Array(16)
  for (const [i, x] of HEX_POSITIONS.entries()) {
    const v = xtob(t[x], t[x + 1])
    if (v < 0) return undefined
    out[i] = v
  }
  return out
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
