/**
 * The pure parts: templates, fact types and conditions, windows, the status precedence, click
 * tokens, push endpoint allow-list and keys, VAPID keys from the environment, recipient groups.
 */
import { describe, expect, it } from "@effect/vitest"
import { Rules, Templates } from "@rec/nudging-service"
import * as ClickTracking from "@rec/nudging-service/ClickTracking"
import { statusOf } from "@rec/nudging-service/Ingest"
import { parsePrivateKey } from "@rec/nudging-service/Keys"
import { recipientGroupId } from "@rec/nudging-service/Orchestrator"
import { endpointAllowed, keyProblems, urgencyOf } from "@rec/nudging-service/WebPush"
import * as Windows from "@rec/nudging-service/Windows"
import * as Either from "effect/Either"
import * as crypto from "node:crypto"
import webpush from "web-push"

const render = (source: string, context: Record<string, unknown>, language = "en") => {
  const template = Templates.parse(source)
  if (typeof template === "string") throw new Error(template)
  return Templates.render(template, context, language)
}

describe("templates", () => {
  it("renders facts and filters", () => {
    expect(render("Up {{ d | round(1) }}% ({{ c }} kWh)", { d: 35.25, c: 412.5 })).toBe("Up 35.3% (412.5 kWh)")
    expect(render("Su del {{ d | round(1) }}%", { d: 35.25 }, "it")).toBe("Su del 35,3%")
    expect(render("{{ d | abs | round(0) }}", { d: -7.6 })).toBe("8")
    expect(render("{{ r | pct_change | round(0) }}%", { r: 1.18 })).toBe("18%")
    expect(render("{{ r | pct_drop | round(0) }}%", { r: 0.8 })).toBe("20%")
    expect(render("{{ n }} {{ n | plural(\"error\", \"errors\") }}", { n: 1 })).toBe("1 error")
    expect(render("{{ n }} {{ n | plural(\"error\", \"errors\") }}", { n: "3" })).toBe("3 errors")
    expect(render("{{ d | map(\"today:oggi\", \"tomorrow:domani\") }}", { d: "tomorrow" })).toBe("domani")
    expect(render("{{ d | map(\"today:oggi\") }}", { d: "Monday" })).toBe("Monday")
    expect(render("{{ d | default(\"today\") | map(\"today:oggi\") }}", {})).toBe("oggi")
    expect(render("{{ missing }}!", {})).toBe("!")
    expect(render("{{ list }}", { list: ["a", "b"] })).toBe("a, b")
    expect(render("no holes", {})).toBe("no holes")
  })

  it("refuses what it cannot render, saying what", () => {
    expect(Templates.parse("{{ x ")).toBe("\"{{\" is not closed by \"}}\"")
    expect(Templates.parse("x }}")).toBe("\"}}\" without \"{{\"")
    expect(Templates.parse("{{ 1x }}")).toBe("\"{{ 1x }}\": \"1x\" is not a fact name")
    expect(Templates.parse("{{ x | upper }}")).toMatch(/unknown filter "upper"/)
    expect(Templates.parse("{{ x | round(9) }}")).toMatch(/round takes one whole number of decimals from 0 to 6/)
    expect(Templates.parse("{{ x | plural(\"a\") }}")).toMatch(/plural takes two texts/)
    expect(Templates.parse("{{ x | map(\"nocolon\") }}")).toMatch(/must read "key:text"/)
    const template = Templates.parse("{{ x | round(1) }}") as Templates.Template
    expect(() => Templates.render(template, { x: "abc" }, "en")).toThrow(Templates.RenderError)
    expect(Templates.names(Templates.parse("{{ a }} and {{ b | abs }}") as Templates.Template)).toEqual(["a", "b"])
  })
})

describe("facts and conditions", () => {
  const rule = {
    id: "r",
    required_facts: { n: "number", i: "integer", d: "date", t: "time", s: "string", b: "boolean", l: "strings" },
    optional_facts: { o: "number" }
  } as unknown as Rules.Rule

  it("types facts, accepting numeric text for numbers", () => {
    const ok = Rules.checkFacts(rule, { n: "3.5", i: "4", d: "2026-05-03", t: "07:30", s: 12, b: true, l: ["x"], extra: 1 })
    expect(ok.issues).toEqual([])
    expect(ok.facts).toMatchObject({ n: 3.5, i: 4, s: "12", extra: 1 })
  })

  it("names every missing or mistyped fact", () => {
    const bad = Rules.checkFacts(rule, { n: "x", i: 1.5, d: "03/05/2026", t: "7:30", s: {}, b: "yes", l: "x", o: "nope" })
    expect(bad.issues.map((i) => i.fact)).toEqual(["n", "i", "d", "t", "s", "b", "l", "o"])
    expect(Rules.checkFacts(rule, { n: null }).issues[0]).toEqual({ fact: "n", message: "is missing (rule r needs it)" })
  })

  it("evaluates comparisons, thresholds (strict) and all/any", () => {
    const facts = { x: 20, s: "wind", b: false }
    expect(Rules.evaluate(undefined, facts).triggered).toBe(true)
    expect(Rules.evaluate({ threshold: { fact: "x", above: 20 } }, facts).triggered).toBe(false)
    expect(Rules.evaluate({ threshold: { fact: "x", above: 19.9 } }, facts).triggered).toBe(true)
    expect(Rules.evaluate({ threshold: { fact: "x", below: 20 } }, facts).triggered).toBe(false)
    for (const [op, expected] of [["<", false], ["<=", true], [">", false], [">=", true], ["==", true], ["!=", false]] as const) {
      expect(Rules.evaluate({ fact: "x", op, value: 20 }, facts).triggered, op).toBe(expected)
    }
    expect(Rules.evaluate({ fact: "s", op: "==", value: "wind" }, facts).triggered).toBe(true)
    expect(Rules.evaluate({ fact: "b", op: "==", value: false }, facts).triggered).toBe(true)
    expect(Rules.evaluate({ all: [{ fact: "x", op: ">", value: 1 }, { fact: "s", op: "==", value: "heat" }] }, facts)).toEqual({
      triggered: false,
      reason: "s == \"heat\" is not met (s is \"wind\")"
    })
    expect(Rules.evaluate({ any: [{ fact: "x", op: ">", value: 100 }, { fact: "s", op: "!=", value: "heat" }] }, facts).triggered).toBe(true)
    expect(Rules.evaluate({ fact: "missing", op: ">", value: 1 }, facts)).toMatchObject({ triggered: false })
  })
})

describe("windows", () => {
  const utc = Windows.zoneNamed("UTC")!
  const rome = Windows.zoneNamed("Europe/Rome")!
  const at = (iso: string) => Date.parse(iso)

  it("buckets", () => {
    expect(Windows.bucketOf("hourly", at("2026-05-03T07:59:59Z"), utc)).toBe("2026-05-03T07")
    expect(Windows.bucketOf("daily", at("2026-05-03T23:59:59Z"), utc)).toBe("2026-05-03")
    expect(Windows.bucketOf("daily", at("2026-05-03T22:00:00Z"), rome)).toBe("2026-05-04")
    expect(Windows.bucketOf("monthly", at("2026-05-31T23:00:00Z"), utc)).toBe("2026-05")
    expect(Windows.bucketOf("yearly", at("2026-12-31T23:30:00Z"), rome)).toBe("2027")
    expect(Windows.bucketOf("once", at("2026-12-31T23:30:00Z"), rome)).toBe("once")
  })

  it("ISO weeks across year ends", () => {
    expect(Windows.isoWeek(2026, 1, 1)).toEqual({ year: 2026, week: 1 }) // Thursday
    expect(Windows.isoWeek(2027, 1, 1)).toEqual({ year: 2026, week: 53 }) // Friday
    expect(Windows.isoWeek(2027, 1, 4)).toEqual({ year: 2027, week: 1 })
    expect(Windows.isoWeek(2024, 12, 30)).toEqual({ year: 2025, week: 1 })
    expect(Windows.bucketOf("weekly", at("2021-01-03T12:00:00Z"), utc)).toBe("2020-W53")
  })

  it("fortnights: 14 days apart is always the next one, 13 days never skips one", () => {
    for (let day = 0; day < 28; day++) {
      const start = at("2026-03-01T12:00:00Z") + day * 86_400_000
      const now = Windows.bucketOf("two_weeks", start, utc)
      expect(Windows.bucketOf("two_weeks", start + 14 * 86_400_000, utc)).not.toBe(now)
      expect(Windows.bucketOf("two_weeks", start + 28 * 86_400_000, utc)).not.toBe(Windows.bucketOf("two_weeks", start + 14 * 86_400_000, utc))
    }
    expect(Windows.bucketOf("two_weeks", at("2026-03-02T00:00:00Z"), utc)).toMatch(/^F\d{4}-\d{2}-\d{2}$/)
  })

  it("days in a zone, summer time included", () => {
    expect(Windows.dayOf(at("2026-07-14T21:59:00Z"), rome)).toEqual({
      start: new Date("2026-07-13T22:00:00Z"),
      end: new Date("2026-07-14T22:00:00Z")
    })
    // The day summer time ends has 25 hours.
    const day = Windows.dayOf(at("2026-10-25T12:00:00Z"), rome)
    expect(day.end.getTime() - day.start.getTime()).toBe(25 * 3_600_000)
    expect(Windows.zoneNamed("Mars/Olympus")).toBeUndefined()
  })
})

describe("the status of an ingest", () => {
  const outcome = (kind: string) => ({ outcome: kind }) as never
  it("is the first of dispatched, suppressed, deduplicated, invalid_facts, rejected; else 204", () => {
    expect(statusOf([])).toBe(204)
    expect(statusOf([outcome("not_triggered")])).toBe(204)
    expect(statusOf([outcome("rejected"), outcome("not_triggered")])).toBe(400)
    expect(statusOf([outcome("rejected"), outcome("invalid_facts")])).toBe(422)
    expect(statusOf([outcome("invalid_facts"), outcome("deduplicated")])).toBe(409)
    expect(statusOf([outcome("deduplicated"), outcome("suppressed")])).toBe(202)
    expect(statusOf([outcome("suppressed"), outcome("dispatched"), outcome("rejected")])).toBe(200)
  })
})

describe("click tokens", () => {
  it("round-trip, and refuse forgeries", () => {
    const token = ClickTracking.sign("secret", "n-1")
    expect(ClickTracking.verify("secret", token)).toEqual(Either.right("n-1"))
    expect(Either.isLeft(ClickTracking.verify("other", token))).toBe(true)
    const [payload, signature] = token.split(".")
    const tampered = `${Buffer.from(JSON.stringify({ notification_id: "n-2" })).toString("base64url")}.${signature}`
    expect(Either.isLeft(ClickTracking.verify("secret", tampered))).toBe(true)
    expect(Either.isLeft(ClickTracking.verify("secret", `${payload}`))).toBe(true)
    const unsigned = Buffer.from("{}").toString("base64url")
    const noId = `${unsigned}.${crypto.createHmac("sha256", "secret").update(unsigned).digest("base64url")}`
    expect(ClickTracking.verify("secret", noId)).toEqual(Either.left(new ClickTracking.InvalidToken({ reason: "The click token names no notification" })))
  })
})

describe("web push", () => {
  it("allows only the listed push services", () => {
    const defaults = ["https://fcm.googleapis.com", "https://*.push.services.mozilla.com", "https://web.push.apple.com"]
    expect(endpointAllowed(defaults, "https://fcm.googleapis.com/fcm/send/abc")).toBe(true)
    expect(endpointAllowed(defaults, "https://updates.push.services.mozilla.com/wpush/v2/x")).toBe(true)
    expect(endpointAllowed(defaults, "https://push.services.mozilla.com.evil.example/x")).toBe(false)
    expect(endpointAllowed(defaults, "http://fcm.googleapis.com/fcm/send/abc")).toBe(false)
    expect(endpointAllowed(defaults, "https://fcm.googleapis.com:8443/x")).toBe(false)
    expect(endpointAllowed(defaults, "https://user:pw@fcm.googleapis.com/x")).toBe(false)
    expect(endpointAllowed(defaults, "https://169.254.169.254/latest")).toBe(false)
    expect(endpointAllowed(["http://127.0.0.1:*"], "http://127.0.0.1:4567/push/1")).toBe(true)
    expect(endpointAllowed(["*"], "https://anything.example/x")).toBe(true)
    expect(endpointAllowed(["*"], "http://anything.example/x")).toBe(false)
    expect(endpointAllowed(defaults, "not a url")).toBe(false)
  })

  it("checks the subscription keys and maps severity to urgency", () => {
    const ecdh = crypto.createECDH("prime256v1")
    ecdh.generateKeys()
    expect(keyProblems({ p256dh: ecdh.getPublicKey().toString("base64url"), auth: crypto.randomBytes(16).toString("base64url") })).toEqual([])
    expect(keyProblems({ p256dh: "AAAA", auth: "AAAA" }).map((p) => p.field)).toEqual(["p256dh", "auth"])
    expect([urgencyOf("info"), urgencyOf("warning"), urgencyOf("critical")]).toEqual(["low", "normal", "high"])
  })

  it("reads VAPID private keys raw or as PEM (one line with \\n too) and derives the public key", () => {
    const keys = webpush.generateVAPIDKeys()
    expect(parsePrivateKey(keys.privateKey)).toEqual({ privateKey: keys.privateKey, publicKey: keys.publicKey })
    const pair = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" })
    const pem = pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    const parsed = parsePrivateKey(pem.replace(/\n/g, "\\n"))
    expect(typeof parsed).toBe("object")
    const jwk = pair.publicKey.export({ format: "jwk" })
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")])
    expect(parsed).toMatchObject({ publicKey: point.toString("base64url") })
    expect(parsePrivateKey("not a key")).toMatch(/^VAPID_PRIVATE_KEY cannot be read/)
    const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    expect(parsePrivateKey(rsa)).toBe("VAPID_PRIVATE_KEY is not a P-256 (prime256v1) private key")
  })
})

describe("recipient groups", () => {
  it("are the grid gateway's id: 16 hex of SHA-256 over the sorted, lower-cased addresses", () => {
    const expected = `email-ingest:${crypto.createHash("sha256").update("a@x.example|b@x.example").digest("hex").slice(0, 16)}`
    expect(recipientGroupId(["B@x.example", "a@x.example"])).toBe(expected)
    expect(recipientGroupId(["a@x.example", "b@x.example", "A@X.example"])).toBe(expected)
  })
})
