// The part of Go's net/url that request signing depends on: url.Parse, URL.Host,
// URL.EscapedPath and URL.RawQuery, with Go's error texts. A SigV4 signature covers the path
// exactly as Go re-escapes it, so WHATWG URL parsing (which normalises differently) would
// produce signatures that differ from OPA's.

import { quoteString } from "../format.js"

export interface GoURL {
  readonly scheme: string
  readonly opaque: string
  /** host or host:port, unescaped. */
  readonly host: string
  /** The decoded path, as UTF-8 bytes. */
  readonly path: Uint8Array
  /** The path as written, when it differs from the default encoding of `path`. */
  readonly rawPath: string
  readonly rawQuery: string
}

/** A url.Parse failure; the message is Go's `parse "<url>": <reason>`. */
export class GoURLError extends Error {}

const enum Mode {
  Host,
  Path
}

const isAlnum = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)
const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
const unhex = (c: number): number => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10)

/** Go's shouldEscape for the two modes used here. */
const shouldEscape = (c: number, mode: Mode): boolean => {
  if (isAlnum(c)) return false
  if (mode === Mode.Host && "!$&'()*+,;=:[]<>\"".includes(String.fromCharCode(c))) return false
  if (c === 0x2d || c === 0x5f || c === 0x2e || c === 0x7e) return false
  if ("$&+,/:;=?@".includes(String.fromCharCode(c))) return mode === Mode.Path ? c === 0x3f : true
  return true
}

/** Go's unescape: percent-decoding with its validity checks. */
const unescape = (s: string, mode: Mode): Uint8Array => {
  const bytes = Buffer.from(s, "utf8")
  const out: number[] = []
  for (let i = 0; i < bytes.length; ) {
    const c = bytes[i]
    if (c === 0x25) {
      if (i + 2 >= bytes.length || !isHex(bytes[i + 1]) || !isHex(bytes[i + 2])) {
        throw new Error(`invalid URL escape ${quoteString(bytes.subarray(i, i + 3).toString("latin1"))}`)
      }
      if (mode === Mode.Host && unhex(bytes[i + 1]) < 8 && bytes.subarray(i, i + 3).toString("latin1") !== "%25") {
        throw new Error(`invalid URL escape ${quoteString(bytes.subarray(i, i + 3).toString("latin1"))}`)
      }
      out.push((unhex(bytes[i + 1]) << 4) | unhex(bytes[i + 2]))
      i += 3
    } else {
      if (mode === Mode.Host && c < 0x80 && shouldEscape(c, mode)) throw new Error(`invalid character ${quoteString(String.fromCharCode(c))} in host name`)
      out.push(c)
      i++
    }
  }
  return Uint8Array.from(out)
}

const HEX = "0123456789ABCDEF"

/** Go's escape for the path: bytes that must be escaped become %XX. */
const escapePath = (bytes: Uint8Array): string => {
  let out = ""
  for (const c of bytes) out += shouldEscape(c, Mode.Path) ? "%" + HEX[c >> 4] + HEX[c & 15] : String.fromCharCode(c)
  return out
}

/** Go's validEncoded for paths. */
const validEncodedPath = (s: string): boolean => {
  for (const c of Buffer.from(s, "utf8")) {
    if ("!$&'()*+,;=:@[]%".includes(String.fromCharCode(c))) continue
    if (shouldEscape(c, Mode.Path)) return false
  }
  return true
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i])

const validOptionalPort = (port: string): boolean => port === "" || (port[0] === ":" && /^[0-9]*$/.test(port.slice(1)))

const parseHost = (host: string): string => {
  if (host.startsWith("[")) {
    const i = host.lastIndexOf("]")
    if (i < 0) throw new Error("missing ']' in host")
    const port = host.slice(i + 1)
    if (!validOptionalPort(port)) throw new Error(`invalid port ${quoteString(port)} after host`)
  } else {
    const i = host.lastIndexOf(":")
    if (i >= 0 && !validOptionalPort(host.slice(i))) throw new Error(`invalid port ${quoteString(host.slice(i))} after host`)
  }
  return Buffer.from(unescape(host, Mode.Host)).toString("utf8")
}

/** Go's getScheme. */
const splitScheme = (raw: string): [string, string] => {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) continue
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
      if (i === 0) return ["", raw]
      continue
    }
    if (c === 0x3a) {
      if (i === 0) throw new Error("missing protocol scheme")
      return [raw.slice(0, i), raw.slice(i + 1)]
    }
    return ["", raw]
  }
  return ["", raw]
}

const parse = (raw: string): GoURL => {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) throw new Error("net/url: invalid control character in URL")
  }
  if (raw === "*") return { scheme: "", opaque: "", host: "", path: Uint8Array.of(0x2a), rawPath: "", rawQuery: "" }
  const [schemeText, afterScheme] = splitScheme(raw)
  const scheme = schemeText.toLowerCase()
  let rest = afterScheme
  let rawQuery = ""
  if (rest.endsWith("?") && rest.indexOf("?") === rest.length - 1) rest = rest.slice(0, -1)
  else {
    const q = rest.indexOf("?")
    if (q >= 0) {
      rawQuery = rest.slice(q + 1)
      rest = rest.slice(0, q)
    }
  }
  if (!rest.startsWith("/")) {
    // A rootless path after a scheme is opaque (mailto:x).
    if (scheme !== "") return { scheme, opaque: rest, host: "", path: new Uint8Array(0), rawPath: "", rawQuery }
    if (rest.split("/")[0].includes(":")) throw new Error("first path segment in URL cannot contain colon")
  }
  let host = ""
  if ((scheme !== "" || !rest.startsWith("///")) && rest.startsWith("//")) {
    let authority = rest.slice(2)
    rest = ""
    const slash = authority.indexOf("/")
    if (slash >= 0) {
      rest = authority.slice(slash)
      authority = authority.slice(0, slash)
    }
    const at = authority.lastIndexOf("@")
    host = parseHost(at < 0 ? authority : authority.slice(at + 1))
  }
  const path = unescape(rest, Mode.Path)
  return { scheme, opaque: "", host, path, rawPath: escapePath(path) === rest ? "" : rest, rawQuery }
}

/** Go's url.Parse. The fragment is checked, then dropped: it never reaches a request. */
export const parseURL = (raw: string): GoURL => {
  const hash = raw.indexOf("#")
  const u = hash < 0 ? raw : raw.slice(0, hash)
  let url: GoURL
  try {
    url = parse(u)
  } catch (e) {
    throw new GoURLError(`parse ${quoteString(u)}: ${(e as Error).message}`)
  }
  if (hash >= 0) {
    try {
      unescape(raw.slice(hash + 1), Mode.Path)
    } catch (e) {
      throw new GoURLError(`parse ${quoteString(raw)}: ${(e as Error).message}`)
    }
  }
  return url
}

/** Go's URL.EscapedPath. */
export const escapedPath = (u: GoURL): string => {
  if (u.rawPath !== "" && validEncodedPath(u.rawPath)) {
    try {
      if (sameBytes(unescape(u.rawPath, Mode.Path), u.path)) return u.rawPath
    } catch {
      // An invalid raw path falls back to the default encoding.
    }
  }
  if (u.path.length === 1 && u.path[0] === 0x2a) return "*"
  return escapePath(u.path)
}
