/**
 * The gateway's pure parts: recipients and their synthetic id, the nudge payload (reference
 * 6.5), breaches, the shapes assembly (reference §3.4 and later upstream's cases), locale
 * negotiation, webhook address rules and signatures, and the migrations' shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { Migrations } from "@rec/db"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as crypto from "node:crypto"
import { breachedHazards, levelsAtOrAbove } from "../src/AlertDispatcher.js"
import { dayLabel, hazardOf, nudgeFor } from "../src/AlertNudges.js"
import { assembleShapes } from "../src/GridData.js"
import { preferredLanguage, primaryLanguage } from "../src/Me.js"
import { migrations } from "../src/migrations/index.js"
import * as Recipients from "../src/Recipients.js"
import * as Webhooks from "../src/Webhooks.js"
import * as WebhookUrls from "../src/WebhookUrls.js"

describe("recipients", () => {
  it("split on commas, semicolons and white space; invalid entries reported; first spelling kept once", () => {
    expect(Recipients.parseStrict(["A@x.example; b@x.example,\n a@X.example\tc@y.example  "])).toEqual({
      addresses: ["A@x.example", "b@x.example", "c@y.example"],
      invalid: []
    })
    expect(Recipients.parseStrict(["ok@x.example a@b @x.y nobody", "x@@y.z"]).invalid).toEqual(["a@b", "@x.y", "nobody", "x@@y.z"])
    expect(Recipients.parseStrict(["", " ; ,"])).toEqual({ addresses: [], invalid: [] })
    expect(Recipients.isEmail(`${"a".repeat(250)}@x.example`)).toBe(false)
  })

  it("the synthetic user id is email-ingest: + 16 hex of SHA-256 over the sorted lower-cased addresses", () => {
    const expected = `email-ingest:${crypto.createHash("sha256").update("a@x.example|b@y.example").digest("hex").slice(0, 16)}`
    expect(Recipients.syntheticUserId(["B@y.example", "a@x.example"])).toBe(expected)
    expect(Recipients.syntheticUserId(["a@x.example", "b@y.example", "A@X.example"])).toBe(expected)
    expect(Recipients.syntheticUserId(["a@x.example"])).not.toBe(expected)
  })
})

describe("the nudge", () => {
  it("wind, heat or thunderstorm; day label relative to the run", () => {
    expect(hazardOf(["wind"])).toBe("wind")
    expect(hazardOf(["heat"])).toBe("heat")
    expect(hazardOf(["wind", "heat"])).toBe("thunderstorm")
    expect(dayLabel("2026-08-17", "2026-08-17")).toBe("today")
    expect(dayLabel("2026-08-18", "2026-08-17")).toBe("tomorrow")
    expect(dayLabel("2026-08-16", "2026-08-17")).toBe("yesterday")
    expect(dayLabel("2026-09-01", "2026-08-31")).toBe("tomorrow")
    expect(dayLabel("2026-08-20", "2026-08-17")).toBe("2026-08-20")
  })

  it("is the reference's extr_event: recipients as a group, else the rule's owner", () => {
    const base = { owner: "sub-1", breached: ["heat"] as const, period: "2026-08-17", runDay: "2026-08-17", windowStart: "14:00", windowEnd: "18:00" }
    expect(nudgeFor({ ...base, recipients: ["ops@dso.example"] })).toEqual({
      event_type: "extr_event",
      user_id: Recipients.syntheticUserId(["ops@dso.example"]),
      facts: {
        facts_version: "1.0",
        scenario: "extr_event",
        period: "2026-08-17",
        window_start: "14:00",
        window_end: "18:00",
        event_type: "heat",
        day_label: "today",
        email_recipients: ["ops@dso.example"]
      }
    })
    expect(nudgeFor({ ...base, recipients: [] })).toMatchObject({ user_id: "sub-1", facts: { email_recipients: [] } })
  })
})

describe("breaches", () => {
  const distributions = {
    wind: [{ risk_level: "LOW", events: 80 }, { risk_level: "WARNING", events: 3 }],
    heat: [{ risk_level: "ALERT", events: 0 }, { risk_level: "warning", events: 2 }]
  }
  it("a hazard the rule lists, at or above its threshold, with events", () => {
    expect(levelsAtOrAbove("WARNING")).toEqual(["WARNING", "ALERT"])
    expect(levelsAtOrAbove("ALERT")).toEqual(["ALERT"])
    expect(breachedHazards({ riskTypes: ["wind", "heat"], threshold: "WARNING" }, distributions)).toEqual(["wind", "heat"])
    expect(breachedHazards({ riskTypes: ["heat"], threshold: "WARNING" }, distributions)).toEqual(["heat"])
    // ALERT with zero events is no breach.
    expect(breachedHazards({ riskTypes: ["wind", "heat"], threshold: "ALERT" }, distributions)).toEqual([])
    expect(breachedHazards({ riskTypes: ["wind"], threshold: "WARNING" }, {})).toEqual([])
  })
})

describe("shapes assembly", () => {
  const line = { type: "LineString", coordinates: [[10.8, 45.9], [10.81, 45.91]] }
  it("geometry from stored text or objects, Features or bare geometries; other columns become properties", () => {
    const collection = assembleShapes([
      { segment_id: "s1", asset_type: "overhead_bare", geom: "0102...", feature_geojson: JSON.stringify({ type: "Feature", geometry: line, properties: { x: 1 } }) },
      { segment_id: "s2", feature_geojson: line },
      { segment_id: "s3", feature_geojson: JSON.stringify(line) },
      { segment_id: "missing" },
      { segment_id: "null", feature_geojson: null },
      { segment_id: "broken", feature_geojson: "{not json" },
      { segment_id: "number", feature_geojson: "42" },
      { segment_id: "null-geometry", feature_geojson: { type: "Feature", geometry: null } },
      { segment_id: "empty", feature_geojson: {} }
    ])
    expect(collection).toEqual({
      type: "FeatureCollection",
      features: [
        // A stored Feature's own properties are not merged (reference §3.4).
        { type: "Feature", geometry: line, properties: { segment_id: "s1", asset_type: "overhead_bare" } },
        { type: "Feature", geometry: line, properties: { segment_id: "s2" } },
        { type: "Feature", geometry: line, properties: { segment_id: "s3" } }
      ]
    })
    expect(assembleShapes([])).toEqual({ type: "FeatureCollection", features: [] })
  })
})

describe("locale", () => {
  it("the primary subtag of the most preferred language", () => {
    expect(primaryLanguage("it-IT")).toBe("it")
    expect(primaryLanguage("en_GB")).toBe("en")
    expect(primaryLanguage("*")).toBeUndefined()
    expect(preferredLanguage("de;q=0.5, it-IT, en;q=0.8")).toBe("it")
    expect(preferredLanguage("fr;q=0.2,es;q=0.9")).toBe("es")
    expect(preferredLanguage("*;q=1, en;q=0")).toBeUndefined()
    expect(preferredLanguage(undefined)).toBeUndefined()
  })
})

describe("webhook addresses", () => {
  const publicAddresses = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:82a::200e", "64:ff9b::5db8:d822"]
  const nonPublic: ReadonlyArray<readonly [string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.20.30.40", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared (carrier-grade NAT)"],
    ["0.0.0.0", "reserved (this network)"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["198.18.0.1", "reserved (benchmarking)"],
    ["::1", "loopback"],
    ["::", "reserved (unspecified or IPv4-compatible)"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["64:ff9b::a00:1", "private"],
    ["2002:c0a8:0101::1", "private"],
    ["fc00::1", "private (unique local)"],
    ["fd12:3456::1", "private (unique local)"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"]
  ]
  it("private, loopback, link-local and other non-public addresses are named; public ones pass", () => {
    for (const address of publicAddresses) expect(WebhookUrls.nonPublicReason(address), address).toBeUndefined()
    for (const [address, reason] of nonPublic) expect(WebhookUrls.nonPublicReason(address), address).toBe(reason)
    expect(WebhookUrls.nonPublicReason("172.32.0.1")).toBeUndefined()
    expect(WebhookUrls.nonPublicReason("not-an-ip")).toBe("not an IP address")
  })

  it("form: https unless allowed, no credentials, no local names, private literals only when allowed", () => {
    const strict = { allowHttp: false, allowPrivate: false }
    const lax = { allowHttp: true, allowPrivate: true }
    const reason = (url: string, rules = strict) => Either.match(WebhookUrls.checkForm(url, rules), { onLeft: (r) => r, onRight: () => "ok" })
    expect(reason("https://hooks.example.com/x")).toBe("ok")
    expect(reason("http://hooks.example.com/x")).toBe("must be an https URL")
    expect(reason("ftp://hooks.example.com/x", lax)).toBe("must be an https or http URL")
    expect(reason("http://127.0.0.1:8080/x", lax)).toBe("ok")
    expect(reason("https://[::1]/x")).toBe("points to a loopback address (::1)")
    expect(reason("https://0x7f.1/x")).toBe("points to a loopback address (127.0.0.1)")
    expect(reason("https://2130706433/x")).toBe("points to a loopback address (127.0.0.1)")
    expect(reason("https://intranet/x")).toBe("names a local host (intranet)")
    expect(reason("https://a.localhost/x")).toBe("names a local host (a.localhost)")
    expect(reason(`https://h.example.com/${"x".repeat(2100)}`)).toBe("is longer than 2048 characters")
  })

  it.effect("names are checked after resolving, every address; the first is the one to connect to", () =>
    Effect.gen(function*() {
      const lookup = (answers: Record<string, Array<string>>): WebhookUrls.Lookup => async (host) =>
        (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
      const rules = { allowHttp: false, allowPrivate: false }
      const target = yield* WebhookUrls.resolveTarget("https://hooks.example.com/a", rules, lookup({ "hooks.example.com": ["93.184.216.34", "2606:4700::1"] }))
      expect(target).toMatchObject({ hostname: "hooks.example.com", address: "93.184.216.34", family: 4 })
      // One private address among public ones is enough to refuse (a resolver may rotate them).
      const mixed = yield* Effect.flip(
        WebhookUrls.resolveTarget("https://hooks.example.com/a", rules, lookup({ "hooks.example.com": ["93.184.216.34", "10.0.0.5"] }))
      )
      expect(mixed).toBe("host hooks.example.com resolves to a private address (10.0.0.5)")
      expect(yield* Effect.flip(WebhookUrls.resolveTarget("https://gone.example.com/", rules, lookup({})))).toBe("host gone.example.com does not resolve")
      const allowed = yield* WebhookUrls.resolveTarget("http://hooks.test:9/", { allowHttp: true, allowPrivate: true }, lookup({ "hooks.test": ["127.0.0.1"] }))
      expect(allowed.address).toBe("127.0.0.1")
    }))
})

describe("webhook signatures", () => {
  it("t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>; verify checks the key, the body and the age", () => {
    const body = JSON.stringify({ type: "grid.alert", rule_id: "r" })
    const header = Webhooks.signature("whsec_k", 1_700_000_000, body)
    const expected = crypto.createHmac("sha256", "whsec_k").update(`1700000000.${body}`).digest("hex")
    expect(header).toBe(`t=1700000000,v1=${expected}`)
    expect(Webhooks.verify("whsec_k", header, body, 1_700_000_100)).toBe(true)
    expect(Webhooks.verify("whsec_other", header, body, 1_700_000_100)).toBe(false)
    expect(Webhooks.verify("whsec_k", header, `${body} `, 1_700_000_100)).toBe(false)
    expect(Webhooks.verify("whsec_k", header, body, 1_700_001_000)).toBe(false)
    expect(Webhooks.verify("whsec_k", "t=abc,v1=zz", body, 1_700_000_000)).toBe(false)
    expect(Webhooks.newSecret()).not.toBe(Webhooks.newSecret())
  })
})

describe("migrations", () => {
  it("are well-formed and strictly increasing", () => {
    const { migrations: valid, problems } = Migrations.validate(migrations)
    expect(problems).toEqual([])
    expect(valid.map((m) => m.id)).toEqual([1, 2, 3])
  })
})
