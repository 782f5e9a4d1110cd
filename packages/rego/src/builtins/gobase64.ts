// Base64 as Go's encoding/base64 has it (OPA's base64.*, the JWT and crypto builtins): strict
// padding, CR and LF skipped anywhere, and Go's error offsets.

/** A base64 decoding error, worded as Go's (base64.CorruptInputError: "illegal base64 data at input byte N"). */
export class Base64Error extends Error {
  static corrupt(offset: number): Base64Error {
    return new Base64Error(`illegal base64 data at input byte ${offset}`)
  }
}

const STD_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const decodeMap = (alphabet: string): Int16Array => {
  const m = new Int16Array(256).fill(-1)
  for (let i = 0; i < alphabet.length; i++) m[alphabet.charCodeAt(i)] = i
  return m
}
const STD_MAP = decodeMap(STD_ALPHABET)
const URL_MAP = decodeMap(URL_ALPHABET)
const PAD = 0x3d // '='
const isNewline = (b: number): boolean => b === 0x0a || b === 0x0d

/**
 * Go's `base64.StdEncoding.DecodeString` (or `URLEncoding` when `url`): padded input, `\r` and
 * `\n` ignored anywhere, trailing bits not checked. Throws Base64Error at the first bad byte.
 */
export const goBase64Decode = (input: string | Uint8Array, url = false): Buffer => {
  const src = typeof input === "string" ? Buffer.from(input, "utf8") : input
  const map = url ? URL_MAP : STD_MAP
  const out: number[] = []
  let si = 0
  const q = [0, 0, 0, 0]
  while (si < src.length) {
    let dlen = 4
    let j = 0
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Buffer.from(out)
        throw Base64Error.corrupt(si - j)
      }
      const c = src[si++]
      const d = map[c]
      if (d >= 0) {
        q[j] = d
        continue
      }
      if (isNewline(c)) {
        j--
        continue
      }
      if (c !== PAD) throw Base64Error.corrupt(si - 1)
      // Padding: only valid as the last one or two characters of a quantum.
      if (j < 2) throw Base64Error.corrupt(si - 1)
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++
        if (si === src.length) throw Base64Error.corrupt(src.length)
        if (src[si] !== PAD) throw Base64Error.corrupt(si - 1)
        si++
      }
      while (si < src.length && isNewline(src[si])) si++
      if (si < src.length) throw Base64Error.corrupt(si)
      dlen = j
      break
    }
    if (j === 4 && dlen === 4) {
      out.push((q[0] << 2) | (q[1] >> 4), ((q[1] & 0xf) << 4) | (q[2] >> 2), ((q[2] & 0x3) << 6) | q[3])
    } else {
      if (dlen >= 2) out.push((q[0] << 2) | (q[1] >> 4))
      if (dlen >= 3) out.push(((q[1] & 0xf) << 4) | (q[2] >> 2))
      return Buffer.from(out)
    }
    // Skip newlines before deciding whether another quantum follows.
    while (si < src.length && isNewline(src[si])) si++
  }
  return Buffer.from(out)
}

/**
 * OPA's `base64url.decode`: unpadded input is padded first (RFC 7515 appendix C), then decoded
 * with Go's padded URL alphabet.
 */
export const base64UrlDecode = (s: string): Buffer => {
  let padded = s
  if (!s.endsWith("=")) {
    // Go measures the length in bytes.
    switch (Buffer.byteLength(s, "utf8") % 4) {
      case 0:
        break
      case 2:
        padded += "=="
        break
      case 3:
        padded += "="
        break
      default:
        throw new Base64Error(`illegal base64url string: ${s}`)
    }
  }
  return goBase64Decode(padded, true)
}

export const base64UrlEncode = (b: Uint8Array): string => Buffer.from(b).toString("base64url")
export const base64StdEncode = (b: Uint8Array): string => Buffer.from(b).toString("base64")
