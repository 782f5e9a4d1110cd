// Names found in certificates, read as Go reads them: DNS labels, RFC 2821 mailboxes, URIs
// (net/url.Parse and URL.String) and IP addresses (net.ParseIP and IP.String).

import { ipv6Text, parseIP as parseNetIP } from "../net.js"
import type { GoURL } from "./model.js"

/** Go's domainToReverseLabels: the labels of a domain, last first; undefined when invalid. */
export const domainToReverseLabels = (domain: string): string[] | undefined => {
  const labels: string[] = []
  let d = domain
  while (d.length > 0) {
    const i = d.lastIndexOf(".")
    if (i < 0) {
      labels.push(d)
      d = ""
    } else {
      labels.push(d.slice(i + 1))
      d = d.slice(0, i)
      if (i === 0) labels.push("")
    }
  }
  if (labels.length > 0 && labels[0].length === 0) return undefined
  for (const l of labels) {
    if (l.length === 0) return undefined
    for (let i = 0; i < l.length; i++) {
      const c = l.charCodeAt(i)
      if (c < 33 || c > 126) return undefined
    }
  }
  return labels
}

/** Go's parseRFC2821Mailbox, reduced to what constraint checking needs. */
export const parseMailbox = (s: string): { local: string; domain: string } | undefined => {
  const at = s.lastIndexOf("@")
  if (at <= 0 || at === s.length - 1) return undefined
  const local = s.slice(0, at)
  const domain = s.slice(at + 1)
  const dotAtom = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*$/
  const quoted = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/
  if (!dotAtom.test(local) && !quoted.test(local)) return undefined
  if (domainToReverseLabels(domain) === undefined) return undefined
  return { local: quoted.test(local) ? local.slice(1, -1).replace(/\\(.)/g, "$1") : local, domain }
}

const unhex = (c: string): number => parseInt(c, 16)

const unescape = (s: string, mode: "path" | "host" | "fragment" | "user"): string => {
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === "%") {
      const h = s.slice(i + 1, i + 3)
      if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new Error(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`)
      bytes.push(unhex(h))
      i += 2
    } else {
      if (mode === "host" && c.charCodeAt(0) < 0x80 && !/[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"]/.test(c)) throw new Error(`invalid character ${JSON.stringify(c)} in host name`)
      for (const b of Buffer.from(c, "utf8")) bytes.push(b)
    }
  }
  return Buffer.from(bytes).toString("utf8")
}

/** Go's shouldEscape for paths and fragments. */
const shouldEscape = (c: number, mode: "path" | "fragment"): boolean => {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false
  switch (String.fromCharCode(c)) {
    case "-":
    case "_":
    case ".":
    case "~":
      return false
    case "$":
    case "&":
    case "+":
    case ",":
    case "/":
    case ":":
    case ";":
    case "=":
    case "?":
    case "@":
      return mode === "path" ? c === 0x3f : false
  }
  if (mode === "fragment" && "!()*".includes(String.fromCharCode(c))) return false
  return true
}

const escape = (s: string, mode: "path" | "fragment"): string => {
  let out = ""
  for (const b of Buffer.from(s, "utf8")) out += shouldEscape(b, mode) ? "%" + b.toString(16).toUpperCase().padStart(2, "0") : String.fromCharCode(b)
  return out
}

/** net/url.Parse (SAN URIs are absolute, so relative-reference corner cases do not arise). */
export const parseURL = (raw: string): GoURL => {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) throw new Error("net/url: invalid control character in URL")
  }
  const hash = raw.indexOf("#")
  const u = hash < 0 ? raw : raw.slice(0, hash)
  const frag = hash < 0 ? undefined : raw.slice(hash + 1)
  if (u.startsWith(":")) throw new Error("missing protocol scheme")
  let scheme = ""
  let rest = u
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u)
  if (sm !== null) {
    scheme = sm[1].toLowerCase()
    rest = u.slice(sm[0].length)
  }
  let rawQuery = ""
  let forceQuery = false
  if (rest.endsWith("?") && rest.indexOf("?") === rest.length - 1) {
    forceQuery = true
    rest = rest.slice(0, -1)
  } else {
    const q = rest.indexOf("?")
    if (q >= 0) {
      rawQuery = rest.slice(q + 1)
      rest = rest.slice(0, q)
    }
  }
  let opaque = ""
  let userinfo: string | undefined
  let host = ""
  let omitHost = false
  let path = ""
  let rawPath = ""
  if (!rest.startsWith("/") && scheme !== "") opaque = rest
  else {
    if (scheme === "" && !rest.startsWith("/") && rest.split("/")[0].includes(":")) throw new Error("first path segment in URL cannot contain colon")
    if (rest.startsWith("//")) {
      let authority = rest.slice(2)
      const slash = authority.indexOf("/")
      rest = slash < 0 ? "" : authority.slice(slash)
      authority = slash < 0 ? authority : authority.slice(0, slash)
      const at = authority.lastIndexOf("@")
      if (at >= 0) {
        userinfo = authority.slice(0, at)
        unescape(userinfo, "user")
      }
      host = unescape(at >= 0 ? authority.slice(at + 1) : authority, "host")
    } else if (scheme !== "" && rest.startsWith("/")) omitHost = true
    path = unescape(rest, "path")
    rawPath = escape(path, "path") === rest ? "" : rest
  }
  let fragment = ""
  let rawFragment = ""
  if (frag !== undefined && frag !== "") {
    fragment = unescape(frag, "fragment")
    rawFragment = escape(fragment, "fragment") === frag ? "" : frag
  }

  // url.String()
  let text = scheme === "" ? "" : scheme + ":"
  if (opaque !== "") text += opaque
  else {
    if ((scheme !== "" || host !== "" || userinfo !== undefined) && !(omitHost && host === "" && userinfo === undefined)) {
      if (host !== "" || path !== "" || userinfo !== undefined) text += "//"
      if (userinfo !== undefined) text += userinfo + "@"
      text += host
    }
    const escapedPath = rawPath !== "" ? rawPath : escape(path, "path")
    if (escapedPath !== "" && escapedPath[0] !== "/" && host !== "") text += "/"
    text += escapedPath
  }
  if (forceQuery || rawQuery !== "") text += "?" + rawQuery
  if (fragment !== "") text += "#" + (rawFragment !== "" ? rawFragment : escape(fragment, "fragment"))
  return { scheme, opaque, user: userinfo !== undefined, host, path, rawPath, omitHost, forceQuery, rawQuery, fragment, rawFragment, text }
}

/** net.ParseIP: 16 bytes (IPv4 addresses IPv4-mapped), undefined when s is not an address. */
export const parseIP = (s: string): Buffer | undefined => {
  const ip = parseNetIP(s)
  if (ip === undefined) return undefined
  const n = ip.v6 ? ip.n : 0xffff00000000n | ip.n
  const out = Buffer.alloc(16)
  out.writeBigUInt64BE(n >> 64n, 0)
  out.writeBigUInt64BE(n & 0xffffffffffffffffn, 8)
  return out
}

const isV4Mapped = (ip: Buffer): boolean => ip.length === 16 && ip.subarray(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff

/** net.IP.String() */
export const ipString = (ip: Buffer): string => {
  if (ip.length === 4) return [...ip].join(".")
  if (ip.length !== 16) return "?" + ip.toString("hex")
  if (isV4Mapped(ip)) return [...ip.subarray(12)].join(".")
  const groups: number[] = []
  for (let i = 0; i < 16; i += 2) groups.push(ip.readUInt16BE(i))
  return ipv6Text(groups)
}
