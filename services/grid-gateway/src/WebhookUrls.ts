/**
 * Which webhook URLs the gateway will call. A webhook is a request the service makes on a
 * user's behalf to an address the user chose, so it must not reach into the service's own
 * network (server-side request forgery):
 *
 * - `https` only, unless `WEBHOOK_ALLOW_HTTP=true`; no credentials in the URL;
 * - never an address that is not public (private, loopback, link-local, shared, multicast,
 *   documentation, reserved; IPv4 inside IPv6 mapped, NAT64 or 6to4 forms judged as the IPv4
 *   address) unless `WEBHOOK_ALLOW_PRIVATE=true`, for literal addresses and for every address
 *   a host name resolves to;
 * - checked when the URL is set (422 saying why) and again before every delivery, after
 *   resolving the name, and the delivery connects to the address that was checked, so a DNS
 *   answer that changes in between (rebinding) cannot redirect it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as dns from "node:dns"
import * as net from "node:net"

export interface WebhookRules {
  readonly allowHttp: boolean
  readonly allowPrivate: boolean
}

/** A resolved address of the webhook's host. */
export interface Target {
  readonly url: URL
  /** The host name as it goes into `Host` and TLS SNI (brackets of IPv6 literals removed). */
  readonly hostname: string
  readonly address: string
  readonly family: 4 | 6
}

const parseIpv4 = (s: string): ReadonlyArray<number> | undefined => {
  if (!net.isIPv4(s)) return undefined
  return s.split(".").map(Number)
}

/** The 16 bytes of an IPv6 address (with `::` and an IPv4 tail), or undefined. */
export const parseIpv6 = (input: string): ReadonlyArray<number> | undefined => {
  const s = input.replace(/%.*$/, "")
  if (!net.isIPv6(s)) return undefined
  let head = s
  let tail: Array<number> = []
  const lastColon = s.lastIndexOf(":")
  const v4 = parseIpv4(s.slice(lastColon + 1))
  if (v4 !== undefined) {
    head = s.slice(0, lastColon + 1) + "0:0"
    tail = [...v4]
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined]
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":"))
  const l = groups(left)
  const r = groups(right)
  const fill = right === undefined ? [] : Array.from({ length: 8 - l.length - r.length }, () => "0")
  const all = [...l, ...fill, ...r]
  if (all.length !== 8) return undefined
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16)
    return [n >> 8, n & 0xff]
  })
  if (tail.length === 4) bytes.splice(12, 4, ...tail)
  return bytes
}

const inV4 = (b: ReadonlyArray<number>, prefix: ReadonlyArray<number>, bits: number) => {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8))
    if (take === 0) return true
    const mask = (0xff << (8 - take)) & 0xff
    if ((b[i]! & mask) !== (prefix[i]! & mask)) return false
  }
  return true
}

/** IPv4 ranges that are not the public internet (IANA special-purpose registry). */
const v4Special: ReadonlyArray<readonly [ReadonlyArray<number>, number, string]> = [
  [[0, 0, 0, 0], 8, "reserved (this network)"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "shared (carrier-grade NAT)"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved (IETF protocol assignments)"],
  [[192, 0, 2, 0], 24, "documentation"],
  [[192, 88, 99, 0], 24, "reserved (6to4 relay)"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "reserved (benchmarking)"],
  [[198, 51, 100, 0], 24, "documentation"],
  [[203, 0, 113, 0], 24, "documentation"],
  [[224, 0, 0, 0], 4, "multicast"],
  [[240, 0, 0, 0], 4, "reserved"]
]

const classifyV4 = (b: ReadonlyArray<number>): string | undefined =>
  v4Special.find(([prefix, bits]) => inV4(b, prefix, bits))?.[2]

const startsWith = (b: ReadonlyArray<number>, prefix: ReadonlyArray<number>, bits: number) => {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8)
    const mask = (0xff << (8 - take)) & 0xff
    if ((b[i]! & mask) !== (prefix[i]! & mask)) return false
  }
  return true
}

const classifyV6 = (b: ReadonlyArray<number>): string | undefined => {
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0)
  // ::ffff:a.b.c.d (mapped): the IPv4 address decides.
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(b.slice(12))
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible form.
  if (zeros(12)) return b[15] === 1 && zeros(15) ? "loopback" : "reserved (unspecified or IPv4-compatible)"
  // NAT64 64:ff9b::/96 and 6to4 2002::/16 carry an IPv4 address the gateway would reach.
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) return classifyV4(b.slice(12)) ?? undefined
  if (b[0] === 0x20 && b[1] === 0x02) return classifyV4(b.slice(2, 6))
  if (startsWith(b, [0xfc], 7)) return "private (unique local)"
  if (startsWith(b, [0xfe, 0x80], 10)) return "link-local"
  if (startsWith(b, [0xfe, 0xc0], 10)) return "site-local"
  if (b[0] === 0xff) return "multicast"
  if (startsWith(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "documentation"
  if (startsWith(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0], 64)) return "reserved (discard)"
  if (startsWith(b, [0x20, 0x01, 0, 0], 32)) return "reserved (Teredo)"
  return undefined
}

/** Why an IP address is not public (`"loopback"`, `"private"`, ...), or undefined for a public one. */
export const nonPublicReason = (address: string): string | undefined => {
  const v4 = parseIpv4(address)
  if (v4 !== undefined) return classifyV4(v4)
  const v6 = parseIpv6(address)
  if (v6 !== undefined) return classifyV6(v6)
  return "not an IP address"
}

const hostnameOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** The URL, if its form is acceptable (scheme, no credentials, no local names); else why not. */
export const checkForm = (input: string, rules: WebhookRules): Either.Either<URL, string> => {
  if (input.length > 2048) return Either.left("is longer than 2048 characters")
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Either.left("is not an absolute URL")
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && rules.allowHttp)) {
    return Either.left(rules.allowHttp ? "must be an https or http URL" : "must be an https URL")
  }
  if (url.username !== "" || url.password !== "") return Either.left("must not contain credentials")
  const host = hostnameOf(url)
  if (host === "") return Either.left("has no host")
  if (!rules.allowPrivate) {
    if (net.isIP(host) !== 0) {
      const reason = nonPublicReason(host)
      if (reason !== undefined) return Either.left(`points to a ${reason} address (${host})`)
    } else if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) {
      return Either.left(`names a local host (${host})`)
    }
  }
  return Either.right(url)
}

export type Lookup = (hostname: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

/** The system resolver (every address, as a connection would use them). */
export const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })

/** The resolver webhook hosts are checked with: the system's unless a test provides another. */
export class Resolver extends Context.Reference<Resolver>()("@rec/grid-gateway/WebhookUrls/Resolver", {
  defaultValue: (): Lookup => systemLookup
}) {}

/**
 * The address to connect to: the URL's form is acceptable and every address its host resolves
 * to is public (unless private ones are allowed); the first of them. Fails saying why.
 */
export const resolveTarget = (input: string, rules: WebhookRules, lookup: Lookup = systemLookup): Effect.Effect<Target, string> =>
  Effect.gen(function*() {
    const url = yield* Either.match(checkForm(input, rules), { onLeft: Effect.fail, onRight: Effect.succeed })
    const hostname = hostnameOf(url)
    const literal = net.isIP(hostname)
    const addresses = literal !== 0
      ? [{ address: hostname, family: literal }]
      : yield* Effect.tryPromise({
        try: () => lookup(hostname),
        catch: (cause) => `host ${hostname} does not resolve (${(cause as { code?: string }).code ?? String(cause)})`
      })
    if (addresses.length === 0) return yield* Effect.fail(`host ${hostname} does not resolve`)
    if (!rules.allowPrivate) {
      for (const { address } of addresses) {
        const reason = nonPublicReason(address)
        if (reason !== undefined) return yield* Effect.fail(`host ${hostname} resolves to a ${reason} address (${address})`)
      }
    }
    const first = addresses[0]!
    return { url, hostname, address: first.address, family: first.family === 6 ? 6 : 4 } satisfies Target
  })
