// Byte-level encodings the crypto and JWT builtins share, with Go's exact semantics since OPA's
// results and error messages come from Go's standard library:
//
//   - PEM blocks as Go's encoding/pem finds them,
//   - a strict DER reader in the manner of golang.org/x/crypto/cryptobyte.

import { base64StdEncode, goBase64Decode } from "./gobase64.js"

// The base64 helpers moved to gobase64.ts; still exported here for existing importers.
export { Base64Error, base64StdEncode, base64UrlDecode, base64UrlEncode, goBase64Decode } from "./gobase64.js"

// ---------------------------------------------------------------------------------------------
// PEM, as Go's encoding/pem.Decode reads it.

export interface PemBlock {
  readonly type: string
  readonly headers: ReadonlyMap<string, string>
  readonly bytes: Buffer
}

const BEGIN = Buffer.from("\n-----BEGIN ")
const END = Buffer.from("\n-----END ")
const DASHES = Buffer.from("-----")

const startsWithAt = (b: Buffer, prefix: Buffer, at = 0): boolean =>
  b.length - at >= prefix.length && b.subarray(at, at + prefix.length).equals(prefix)

const trimRightSpaceTab = (b: Buffer): Buffer => {
  let e = b.length
  while (e > 0 && (b[e - 1] === 0x20 || b[e - 1] === 0x09)) e--
  return b.subarray(0, e)
}

/** Go's pem getLine: the line without its terminator and trailing spaces/tabs, and the rest. */
const getLine = (data: Buffer): [Buffer, Buffer] => {
  const nl = data.indexOf(0x0a)
  let i: number
  let j: number
  if (nl < 0) {
    i = data.length
    j = i
  } else {
    i = nl
    j = nl + 1
    if (i > 0 && data[i - 1] === 0x0d) i--
  }
  return [trimRightSpaceTab(data.subarray(0, i)), data.subarray(j)]
}

/**
 * Finds the next PEM block in data. Returns the block (undefined when there is none) and the
 * bytes after it (all of data when there is none), exactly as Go's pem.Decode.
 */
export const pemDecode = (data: Buffer): { block: PemBlock | undefined; rest: Buffer } => {
  let rest = data
  for (;;) {
    if (startsWithAt(rest, BEGIN.subarray(1))) {
      rest = rest.subarray(BEGIN.length - 1)
    } else {
      const at = rest.indexOf(BEGIN)
      if (at < 0) return { block: undefined, rest: data }
      rest = rest.subarray(at + BEGIN.length)
    }
    let typeLine: Buffer
    ;[typeLine, rest] = getLine(rest)
    if (typeLine.length < DASHES.length || !typeLine.subarray(typeLine.length - DASHES.length).equals(DASHES)) continue
    typeLine = typeLine.subarray(0, typeLine.length - DASHES.length)

    const headers = new Map<string, string>()
    let truncated = false
    for (;;) {
      if (rest.length === 0) {
        truncated = true
        break
      }
      const [line, next] = getLine(rest)
      const colon = line.indexOf(0x3a)
      if (colon < 0) break
      headers.set(line.subarray(0, colon).toString("latin1").trim(), line.subarray(colon + 1).toString("latin1").trim())
      rest = next
    }
    if (truncated) return { block: undefined, rest: data }

    let endIndex: number
    let endTrailerIndex: number
    if (headers.size === 0 && startsWithAt(rest, END.subarray(1))) {
      endIndex = 0
      endTrailerIndex = END.length - 1
    } else {
      endIndex = rest.indexOf(END)
      endTrailerIndex = endIndex + END.length
    }
    if (endIndex < 0) continue

    let endTrailer = rest.subarray(endTrailerIndex)
    const endTrailerLen = typeLine.length + DASHES.length
    if (endTrailer.length < endTrailerLen) continue
    const restOfEndLine = endTrailer.subarray(endTrailerLen)
    endTrailer = endTrailer.subarray(0, endTrailerLen)
    if (!endTrailer.subarray(0, typeLine.length).equals(typeLine) || !endTrailer.subarray(typeLine.length).equals(DASHES)) continue
    if (getLine(restOfEndLine)[0].length !== 0) continue

    const body = Buffer.from(rest.subarray(0, endIndex).filter((c) => c !== 0x20 && c !== 0x09))
    let bytes: Buffer
    try {
      bytes = goBase64Decode(body)
    } catch {
      continue
    }
    const after = getLine(rest.subarray(endIndex + END.length - 1))[1]
    return { block: { type: typeLine.toString("latin1"), headers, bytes }, rest: after }
  }
}

/** `pem.Encode` of a block without headers. */
export const pemEncode = (type: string, bytes: Uint8Array): string => {
  const b64 = base64StdEncode(bytes)
  let body = ""
  for (let i = 0; i < b64.length; i += 64) body += b64.slice(i, i + 64) + "\n"
  return `-----BEGIN ${type}-----\n${body}-----END ${type}-----\n`
}

// ---------------------------------------------------------------------------------------------
// DER

/** Universal tags (class and constructed bits included, as in the first identifier byte). */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  UTF8_STRING: 0x0c,
  SEQUENCE: 0x30,
  SET: 0x31,
  NUMERIC_STRING: 0x12,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e
} as const

/** `[n]` context-specific primitive tag. */
export const ctx = (n: number): number => 0x80 | n
/** `[n]` context-specific constructed tag. */
export const ctxCons = (n: number): number => 0xa0 | n

export interface Element {
  /** The identifier byte. */
  readonly tag: number
  /** The whole element (identifier, length and content). */
  readonly raw: Buffer
  readonly content: Buffer
}

/**
 * A cursor over DER data. Reads are strict the way cryptobyte is: single-byte tags only,
 * definite minimal lengths. Every read returns undefined on malformed input and leaves the
 * cursor where it was, so callers map failures to their own messages.
 */
export class Der {
  private pos = 0
  constructor(private readonly buf: Buffer) {}

  get empty(): boolean {
    return this.pos >= this.buf.length
  }

  /** The bytes not read yet. */
  remaining(): Buffer {
    return this.buf.subarray(this.pos)
  }

  peekTag(): number | undefined {
    return this.empty ? undefined : this.buf[this.pos]
  }

  /** Reads the next element, whatever its tag. */
  any(): Element | undefined {
    const b = this.buf
    let p = this.pos
    if (b.length - p < 2) return undefined
    const tag = b[p++]
    if ((tag & 0x1f) === 0x1f) return undefined // high tag numbers are not used in X.509
    let len = b[p++]
    if (len & 0x80) {
      const n = len & 0x7f
      if (n === 0 || n > 4 || b.length - p < n) return undefined
      len = 0
      for (let i = 0; i < n; i++) len = len * 256 + b[p++]
      // Minimal encoding: no leading zero byte, and the long form only from 128 on.
      if (b[this.pos + 2] === 0 || len < 128) return undefined
    }
    if (b.length - p < len) return undefined
    const start = this.pos
    this.pos = p + len
    return { tag, raw: b.subarray(start, p + len), content: b.subarray(p, p + len) }
  }

  /** Reads the next element if it has the given tag. */
  read(tag: number): Element | undefined {
    if (this.peekTag() !== tag) return undefined
    return this.any()
  }

  /** Reads an element with the tag if the next one has it; `null` when absent, undefined when malformed. */
  optional(tag: number): Element | null | undefined {
    if (this.peekTag() !== tag) return null
    return this.any()
  }

  /** A reader over the content of the next element with the tag. */
  enter(tag: number): Der | undefined {
    const e = this.read(tag)
    return e === undefined ? undefined : new Der(e.content)
  }

  /** The next element with the tag, parsed from its content; on a malformed one the cursor stays. */
  private parsed<T>(tag: number, parse: (content: Buffer) => T | undefined): T | undefined {
    const save = this.pos
    const e = this.read(tag)
    if (e === undefined) return undefined
    const v = parse(e.content)
    if (v === undefined) this.pos = save
    return v
  }

  integer(tag: number = TAG.INTEGER): bigint | undefined {
    return this.parsed(tag, parseInteger)
  }

  /** An INTEGER that fits in a JS safe integer (Go reads these into int). */
  smallInteger(tag: number = TAG.INTEGER): number | undefined {
    return this.parsed(tag, (c) => {
      const v = parseInteger(c)
      return v === undefined || v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(v)
    })
  }

  boolean(): boolean | undefined {
    return this.parsed(TAG.BOOLEAN, (c) => (c.length === 1 && (c[0] === 0 || c[0] === 0xff) ? c[0] === 0xff : undefined))
  }

  oid(): number[] | undefined {
    return this.parsed(TAG.OID, parseOid)
  }

  bitString(): BitString | undefined {
    return this.parsed(TAG.BIT_STRING, parseBitString)
  }
}

export interface BitString {
  readonly bytes: Buffer
  readonly bitLength: number
}

/** Bit i (0 is the most significant bit of the first byte), 0 beyond the end. */
export const bitAt = (b: BitString, i: number): number => {
  if (i < 0 || i >= b.bitLength) return 0
  return (b.bytes[i >> 3] >> (7 - (i & 7))) & 1
}

const parseBitString = (c: Buffer): BitString | undefined => {
  if (c.length === 0) return undefined
  const padding = c[0]
  const bytes = c.subarray(1)
  if (padding > 7 || (bytes.length === 0 && padding !== 0) || (bytes.length > 0 && (bytes[bytes.length - 1] & ((1 << padding) - 1)) !== 0)) return undefined
  return { bytes, bitLength: bytes.length * 8 - padding }
}

/** Two's-complement big-endian integer content, rejecting non-minimal encodings. */
export const parseInteger = (c: Buffer): bigint | undefined => {
  if (c.length === 0) return undefined
  if (c.length > 1 && ((c[0] === 0 && (c[1] & 0x80) === 0) || (c[0] === 0xff && (c[1] & 0x80) !== 0))) return undefined
  let v = BigInt("0x" + c.toString("hex"))
  if (c[0] & 0x80) v -= 1n << BigInt(c.length * 8)
  return v
}

export const parseOid = (c: Buffer): number[] | undefined => {
  if (c.length === 0) return undefined
  const arcs: number[] = []
  let v = 0
  let started = false
  for (let i = 0; i < c.length; i++) {
    const b = c[i]
    if (!started && b === 0x80) return undefined // non-minimal
    started = true
    if (v >= 1 << 24) return undefined // Go keeps components in 31 bits
    v = v * 128 + (b & 0x7f)
    if ((b & 0x80) === 0) {
      arcs.push(v)
      v = 0
      started = false
    }
  }
  if (started) return undefined
  const first = arcs[0]
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80]
  return [...head, ...arcs.slice(1)]
}

export const oidString = (oid: readonly number[]): string => oid.join(".")

/** Unsigned big-endian magnitude of a non-negative bigint (empty for zero, as Go's big.Int.Bytes). */
const bigToBytes = (v: bigint): Buffer => {
  if (v === 0n) return Buffer.alloc(0)
  let hex = v.toString(16)
  if (hex.length % 2 === 1) hex = "0" + hex
  return Buffer.from(hex, "hex")
}

export const bytesToBig = (b: Uint8Array): bigint => (b.length === 0 ? 0n : BigInt("0x" + Buffer.from(b).toString("hex")))

const encodeLength = (n: number): Buffer => {
  if (n < 128) return Buffer.from([n])
  const bytes: number[] = []
  for (let x = n; x > 0; x = Math.floor(x / 256)) bytes.unshift(x & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

/** A DER element with the given tag and content. */
export const derElement = (tag: number, content: Uint8Array): Buffer => Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content])

/** A non-negative INTEGER element. */
export const derUnsignedInteger = (v: bigint): Buffer => {
  let b = bigToBytes(v)
  if (b.length === 0 || b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b])
  return derElement(TAG.INTEGER, b)
}
