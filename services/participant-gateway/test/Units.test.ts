/**
 * The gateway's pure parts: the assistant proxy's path and header rules, the months of the
 * overview, the tariff setting, the profile's groups, the digital twin's failures as answers, and
 * the migrations.
 */
import { describe, expect, it } from "@effect/vitest"
import { Migrations } from "@rec/db"
import { DigitalTwinError } from "@rec/digital-twin"
import { AssistantProxy, Clients, Config, migrations } from "@rec/participant-gateway-service"
import * as Period from "@rec/participant-gateway-service/Period"
import { groupsOf } from "@rec/participant-gateway-service/Profiles"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

const { requestHeaders, responseHeaders, targetOf } = AssistantProxy

describe("assistant proxy target", () => {
  it("maps /api/assistant/<path>?<query> to /api/<path>?<query>, segments and query as written", () => {
    expect(targetOf("/api/assistant/chat")).toEqual(Either.right("/api/chat"))
    expect(targetOf("/api/assistant/conversations/3f2a/messages?limit=5&limit=6")).toEqual(
      Either.right("/api/conversations/3f2a/messages?limit=5&limit=6")
    )
    expect(targetOf("/api/assistant/attachments/a%20b/raw?q=%2e%2e%2f")).toEqual(
      Either.right("/api/attachments/a%20b/raw?q=%2e%2e%2f")
    )
    // A dot inside a name is no dot segment.
    expect(targetOf("/api/assistant/files/report.v2..pdf")).toEqual(Either.right("/api/files/report.v2..pdf"))
  })

  it.each([
    ["/api/assistant/../admin", "may not contain . or .. segments"],
    ["/api/assistant/./chat", "may not contain . or .. segments"],
    ["/api/assistant/conversations/..", "may not contain . or .. segments"],
    ["/api/assistant/%2e%2e/admin", "may not contain . or .. segments"],
    ["/api/assistant/%2E%2E/admin", "may not contain . or .. segments"],
    ["/api/assistant/.%2e/admin", "may not contain . or .. segments"],
    ["/api/assistant/%252e%252e/admin", "may not contain . or .. segments (even when encoded twice)"],
    ["/api/assistant/conversations%2f..%2fadmin", "may not contain encoded slashes or backslashes"],
    ["/api/assistant/conversations%2Fx", "may not contain encoded slashes or backslashes"],
    ["/api/assistant/a%5cb", "may not contain encoded slashes or backslashes"],
    ["/api/assistant/a%252fb", "may not contain encoded slashes or backslashes (even when encoded twice)"],
    ["/api/assistant/a\\..\\b", "may not contain backslashes"],
    ["/api/assistant/a//b", "may not contain empty segments (// or a trailing /)"],
    ["/api/assistant/chat/", "may not contain empty segments (// or a trailing /)"],
    ["/api/assistant/a%00b", "may not contain control characters"],
    ["/api/assistant/a%zzb", "is not valid percent-encoding"]
  ])("refuses %s", (url, why) => {
    expect(targetOf(url)).toEqual(Either.left(`The assistant path ${why}`))
  })

  it("needs a path", () => {
    expect(Either.isLeft(targetOf("/api/assistant/"))).toBe(true)
    expect(Either.isLeft(targetOf("/api/assistant/?x=1"))).toBe(true)
  })
})

describe("assistant proxy headers", () => {
  it("drops hop-by-hop, credentials, cookies and tracing headers, and adds X-Forwarded-*", () => {
    const out = requestHeaders(
      {
        host: "gateway.example",
        connection: "keep-alive, x-secret-hop",
        "keep-alive": "timeout=5",
        "x-secret-hop": "1",
        te: "trailers",
        "transfer-encoding": "chunked",
        upgrade: "h2c",
        "proxy-authorization": "Basic eA==",
        authorization: "Bearer from-client",
        "x-auth-request-access-token": "token",
        cookie: "_oauth2_proxy=abc",
        expect: "100-continue",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "x-request-id": "abc",
        "content-length": "12",
        "content-type": "application/json",
        accept: "text/event-stream",
        "accept-language": "it",
        "x-forwarded-for": "10.0.0.1"
      },
      "x-auth-request-access-token",
      "127.0.0.1"
    )
    expect(out).toEqual({
      "content-type": "application/json",
      accept: "text/event-stream",
      "accept-language": "it",
      "x-forwarded-for": "10.0.0.1, 127.0.0.1",
      "x-forwarded-host": "gateway.example",
      "x-forwarded-proto": "http"
    })
  })

  it("passes the answer's headers but hop-by-hop, cookies and CORS; marks event streams unbuffered", () => {
    expect(responseHeaders({
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
      "transfer-encoding": "chunked",
      "set-cookie": "a=b",
      "access-control-allow-origin": "*",
      "x-request-id": "upstream-id",
      "x-conversation": "42"
    })).toEqual({
      "content-type": "text/event-stream; charset=utf-8",
      "x-conversation": "42",
      "x-accel-buffering": "no",
      "cache-control": "no-cache"
    })
    expect(responseHeaders({ "content-type": "application/pdf", "content-length": "10", "cache-control": "private" }))
      .toEqual({ "content-type": "application/pdf", "content-length": "10", "cache-control": "private" })
  })
})

describe("periods", () => {
  const rome = Option.getOrThrow(DateTime.zoneMakeNamed("Europe/Rome"))
  const iso = (d: DateTime.Utc) => DateTime.formatIso(d)

  it("begin at midnight in the zone, daylight saving time included", () => {
    const march = Period.window("2026-03", rome)
    expect([iso(march.start), iso(march.end)]).toEqual(["2026-02-28T23:00:00.000Z", "2026-03-31T22:00:00.000Z"])
    const december = Period.window("2025-12", rome)
    expect([iso(december.start), iso(december.end)]).toEqual(["2025-11-30T23:00:00.000Z", "2025-12-31T23:00:00.000Z"])
  })

  it("the current month is the zone's", () => {
    expect(Period.current(DateTime.unsafeMake("2026-03-31T22:30:00Z"), rome)).toBe("2026-04")
    expect(Period.current(DateTime.unsafeMake("2026-03-31T21:30:00Z"), rome)).toBe("2026-03")
  })
})

describe("configuration", () => {
  it("reads per-community tariffs and refuses malformed ones", () => {
    const parsed = Config.parseTariffs(" it-energy-community=0.118 , other=0 ")
    expect(Either.map(parsed, (m) => [...m.entries()])).toEqual(Either.right([["it-energy-community", 0.118], ["other", 0]]))
    expect(Either.isLeft(Config.parseTariffs("it-energy-community"))).toBe(true)
    expect(Either.isLeft(Config.parseTariffs("x=abc"))).toBe(true)
    expect(Either.isLeft(Config.parseTariffs("x=-1"))).toBe(true)
    expect(Either.isLeft(Config.parseTariffs("=0.1"))).toBe(true)
    expect(Config.parseTariffs("")).toEqual(Either.right(new Map()))
  })
})

describe("profile", () => {
  it("groups are the token's groups claim without the leading slash, sorted and unique", () => {
    expect(groupsOf({ groups: ["/viewers", "/admins", "admins", 3, ""], realm_access: { roles: ["offline_access"] } }))
      .toEqual(["admins", "viewers"])
    expect(groupsOf({})).toEqual([])
  })
})

describe("digital twin failures", () => {
  const failure = (status: number) => Clients.fromTwinError(new DigitalTwinError({ operation: "meters_data", status, message: "m" }))

  it("keep a refusal, make a failure a bad gateway and silence a timeout", () => {
    expect([failure(404).status, failure(403).status]).toEqual([404, 403])
    expect([failure(400).status, failure(500).status, failure(502).status, failure(503).status]).toEqual([502, 502, 502, 502])
    expect(failure(504).status).toBe(504)
    expect(failure(500).detail).toBe("Digital twin failed meters_data: m")
  })
})

describe("migrations", () => {
  it("are well formed", () => {
    const { migrations: valid, problems } = Migrations.validate(migrations)
    expect(problems).toEqual([])
    expect(valid.length).toBe(1)
  })
})
