// net.* beyond OPA's conformance suite: IPv6 and IPv4-mapped networks, Go's parsing rules,
// cidr_merge's edge cases (bare addresses, mixed families, adjacency), and the DNS policy of
// net.lookup_ip_addr.
import { describe, expect, it } from "vitest"
import { defaultBuiltins } from "@rec/rego/builtins/index"
import { lookupIpAddr } from "@rec/rego/builtins/net"
import { Rego } from "@rec/rego/rego"
import type { Value } from "@rec/rego/value"
import { builtinContext, builtinFailure, callBuiltinJSON } from "./helpers.js"

let charged = 0
const ctx = builtinContext((n) => {
  charged += n
})

const call = (name: string, ...args: Value[]): unknown => callBuiltinJSON(name, args, ctx)
const failure = (name: string, ...args: Value[]): string => builtinFailure(() => call(name, ...args))
const sorted = (x: unknown): unknown => (Array.isArray(x) ? [...x].sort() : x)

describe("net.cidr_contains / cidr_intersects", () => {
  it("handles IPv6, compressed forms and embedded IPv4", () => {
    expect(call("net.cidr_contains", "2001:db8::/32", "2001:0db8:0000:0000:0000:0000:0000:0001")).toBe(true)
    expect(call("net.cidr_contains", "2001:db8::/32", "2001:db9::1")).toBe(false)
    expect(call("net.cidr_contains", "::ffff:0:0/96", "10.1.2.3")).toBe(true)
    expect(call("net.cidr_contains", "64:ff9b::/96", "64:ff9b::192.0.2.33")).toBe(true)
    expect(call("net.cidr_contains", "fe80::/10", "fe80::1/64")).toBe(true)
    expect(call("net.cidr_intersects", "2001:db8::/32", "2001:db8:1::/48")).toBe(true)
    expect(call("net.cidr_intersects", "10.0.0.0/8", "::/0")).toBe(false)
  })

  it("parses as Go does: leading zeros in the prefix, none in IPv4 octets", () => {
    expect(call("net.cidr_is_valid", "10.0.0.0/008")).toBe(true)
    expect(call("net.cidr_is_valid", "010.0.0.0/8")).toBe(false)
    expect(call("net.cidr_is_valid", "10.0.0.0/33")).toBe(false)
    expect(call("net.cidr_is_valid", "::1/129")).toBe(false)
    expect(call("net.cidr_is_valid", "1:2:3:4:5:6:7:8:9/64")).toBe(false)
    expect(call("net.cidr_is_valid", "fe80::1%eth0/64")).toBe(false)
    expect(failure("net.cidr_contains", "10.0.0.0/8", "nope")).toBe("eval_builtin_error: not a valid textual representation of an IP address or CIDR: nope")
  })
})

describe("net.cidr_expand", () => {
  it("expands IPv6 networks in canonical form and charges the work up front", () => {
    charged = 0
    expect(sorted(call("net.cidr_expand", "2001:db8::fffe/127"))).toEqual(["2001:db8::fffe", "2001:db8::ffff"])
    expect(charged).toBe(2)
    charged = 0
    expect(sorted(call("net.cidr_expand", "10.0.0.0/30"))).toEqual(["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3"])
    expect(charged).toBe(4)
  })

  it("stops a huge network at the step limit, before allocating it", () => {
    const rego = Rego.compile({ modules: { "p.rego": "package p\nn := count(net.cidr_expand(input.cidr))" }, defaults: { limits: { maxSteps: 100_000 } } })
    expect(() => rego.prepare("x := data.p.n").evaluate({ cidr: "2001:db8::/64" })).toThrow(/limit of 100000 steps/)
  })
})

describe("net.cidr_merge", () => {
  const merge = (...xs: string[]): unknown => sorted(call("net.cidr_merge", xs))

  it("merges adjacent and overlapping networks into the fewest CIDRs", () => {
    expect(merge("10.0.0.0/25", "10.0.0.128/25")).toEqual(["10.0.0.0/24"])
    expect(merge("10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24")).toEqual(["10.0.0.0/23", "10.0.2.0/24"])
    expect(merge("10.0.0.0/8", "10.1.0.0/16", "10.255.255.255/32")).toEqual(["10.0.0.0/8"])
    expect(merge("2001:db8::/33", "2001:db8:8000::/33")).toEqual(["2001:db8::/32"])
    expect(merge("0.0.0.0/1", "128.0.0.0/1")).toEqual(["0.0.0.0/0"])
  })

  it("keeps networks it does not merge as written (after masking)", () => {
    expect(merge("2001:db8::1/64")).toEqual(["2001:db8::/64"])
    // A bare IPv4 address gets its classful mask and keeps its host bits when not merged (OPA's IPNet{IP, DefaultMask}).
    expect(merge("192.0.2.112")).toEqual(["192.0.2.112/24"])
    expect(merge("10.1.2.3", "172.16.5.4")).toEqual(["10.1.2.3/8", "172.16.5.4/16"])
  })

  it("sorts both families together, IPv4 inside ::ffff:0:0/96, as OPA does", () => {
    expect(merge("::/0", "10.0.0.0/8")).toEqual(["::/0"])
    expect(merge("fe80::/64", "10.0.0.0/8")).toEqual(["10.0.0.0/8", "fe80::/64"])
  })

  it("reports OPA's errors", () => {
    expect(failure("net.cidr_merge", "10.0.0.0/8")).toBe("eval_builtin_error: operand must be an array")
    expect(failure("net.cidr_merge", [1])).toBe("eval_builtin_error: element must be string")
    expect(failure("net.cidr_merge", ["2001:db8::1"])).toBe("eval_builtin_error: IPv6 invalid: needs prefix length")
    expect(failure("net.cidr_merge", ["nope"])).toBe("eval_builtin_error: invalid CIDR address: nope")
    expect(failure("net.cidr_merge", ["224.0.0.1"])).toBe("eval_builtin_error: IPv4 address without a default mask needs a prefix length: 224.0.0.1")
  })
})

describe("net.lookup_ip_addr", () => {
  it("answers literal addresses and localhost names without I/O", () => {
    expect(call("net.lookup_ip_addr", "2001:0db8:0::1")).toEqual(["2001:db8::1"])
    expect(call("net.lookup_ip_addr", "::ffff:192.0.2.1")).toEqual(["192.0.2.1"])
    expect(sorted(call("net.lookup_ip_addr", "api.localhost."))).toEqual(["127.0.0.1", "::1"])
  })

  it("refuses other names unless the host supplies a resolver, even without strict errors", () => {
    expect(failure("net.lookup_ip_addr", "example.com")).toBe("eval_builtin_error: cannot resolve example.com: DNS lookups are disabled (a host enables them with a resolver)")
    const rego = Rego.compile({ modules: { "p.rego": "package p\naddrs := net.lookup_ip_addr(input.host)" } })
    expect(() => rego.prepare("x := data.p.addrs").evaluate({ host: "example.com" })).toThrow("net.lookup_ip_addr: cannot resolve example.com")
  })

  it("uses a host's resolver", () => {
    const hosts = new Map([["db.internal", ["10.0.0.7", "fd00:0::7"]]])
    const builtins = defaultBuiltins().with(lookupIpAddr((name) => hosts.get(name) ?? []))
    const rego = Rego.compile({ modules: { "p.rego": "package p\naddrs := net.lookup_ip_addr(input.host)" }, builtins })
    expect(rego.prepare("x := data.p.addrs").evaluate({ host: "db.internal" })).toEqual([{ x: ["10.0.0.7", "fd00::7"] }])
    expect(rego.prepare("x := data.p.addrs").evaluate({ host: "unknown.internal" })).toEqual([{ x: [] }])
  })
})
