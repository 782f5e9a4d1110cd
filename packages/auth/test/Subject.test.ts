import { describe, expect, it } from "@effect/vitest"
import { Subject } from "@rec/auth"
import * as Schema from "effect/Schema"

describe("Subject.fromClaims (reference policy-service §1.1)", () => {
  it("a user: id from sub, groups from realm roles and groups without the leading slash", () => {
    const subject = Subject.fromClaims({
      sub: "3f2c",
      preferred_username: "alice",
      azp: "frontend-client",
      email: "alice@example.org",
      name: "Alice A.",
      realm_access: { roles: ["offline_access", "admins"] },
      groups: ["/editors", "/org/admins", "//double", "editors"],
      scope: "openid  dataset.query\tprofile"
    })
    expect(subject.type).toBe("user")
    expect(subject.isService).toBe(false)
    expect(subject.id).toBe("3f2c")
    expect(subject.groups).toEqual(["admins", "double", "editors", "offline_access", "org/admins"])
    expect(subject.scopes).toEqual(["dataset.query", "openid", "profile"])
    expect(subject).toMatchObject({ email: "alice@example.org", name: "Alice A.", username: "alice", sub: "3f2c" })
    expect(subject.hasScope("dataset.query")).toBe(true)
    expect(subject.inGroup("editors")).toBe(true)
  })

  it("azp alone does not make a service", () => {
    expect(Subject.fromClaims({ sub: "u", azp: "frontend-client" }).type).toBe("user")
  })

  it("user id falls back to preferred_username, then unknown-user", () => {
    expect(Subject.fromClaims({ preferred_username: "bob" }).id).toBe("bob")
    expect(Subject.fromClaims({}).id).toBe("unknown-user")
  })

  it("a service account: detected by client_id, clientId or the service-account- prefix", () => {
    expect(Subject.fromClaims({ client_id: "grid-gateway", sub: "x" })).toMatchObject({ type: "service", id: "grid-gateway" })
    expect(Subject.fromClaims({ clientId: "nudging", sub: "x" })).toMatchObject({ type: "service", id: "nudging" })
    // A client_id key with an empty value still marks a service; the id comes from further down.
    expect(Subject.fromClaims({ client_id: "", azp: "flex" })).toMatchObject({ type: "service", id: "flex" })
    expect(Subject.fromClaims({ preferred_username: "service-account-registry", sub: "s" }))
      .toMatchObject({ type: "service", id: "registry" })
    expect(Subject.fromClaims({ client_id: null, sub: "only-sub" }).id).toBe("only-sub")
    expect(Subject.fromClaims({ client_id: null }).id).toBe("unknown-service")
  })

  it("a service has no groups even when the token carries some", () => {
    const subject = Subject.fromClaims({
      client_id: "grid-gateway",
      realm_access: { roles: ["admins"] },
      groups: ["/admins"],
      scope: "dt.read dt.write"
    })
    expect(subject.groups).toEqual([])
    expect(subject.scopes).toEqual(["dt.read", "dt.write"])
  })

  it("scopes from a list keep truthy items, stringified, de-duplicated and sorted", () => {
    expect(Subject.fromClaims({ scope: ["a", 1, null, "", 0, false, "a"] }).scopes).toEqual(["1", "a"])
    expect(Subject.fromClaims({ scope: 42 }).scopes).toEqual([])
    expect(Subject.fromClaims({}).scopes).toEqual([])
  })

  it("a non-list groups claim is ignored", () => {
    expect(Subject.fromClaims({ sub: "u", groups: "/admins" }).groups).toEqual([])
  })

  it("organizations: the Keycloak 26 object form with type and attributes", () => {
    const subject = Subject.fromClaims({
      sub: "u",
      organization: {
        "dso-alto-garda": {
          id: "6c1f",
          name: "Alto Garda DSO",
          type: ["dso"],
          region: ["Trentino"],
          groups: ["/operators"],
          roles: ["viewer"]
        },
        "it-energy-community": { attributes: { type: "rec", size: ["small"] } },
        bare: {}
      }
    })
    expect(subject.organizations.map((o) => o.alias)).toEqual(["dso-alto-garda", "it-energy-community", "bare"])
    const [dso, rec, bare] = subject.organizations
    expect(dso).toMatchObject({
      id: "6c1f",
      name: "Alto Garda DSO",
      types: ["dso"],
      attributes: { region: ["Trentino"] },
      groups: ["operators"],
      roles: ["viewer"]
    })
    expect(rec).toMatchObject({ types: ["rec"], attributes: { type: ["rec"], size: ["small"] } })
    expect(bare).toMatchObject({ types: [], attributes: {}, groups: [], roles: [] })
    expect(subject.organizationsOfType("dso").map((o) => o.alias)).toEqual(["dso-alto-garda"])
    // Organization groups stay with the organization; the subject's groups follow §1.1 only.
    expect(subject.groups).toEqual([])
  })

  it("organizations: list and single-alias forms", () => {
    expect(Subject.fromClaims({ organization: ["acme", "beta", "", 7] }).organizations.map((o) => o.alias))
      .toEqual(["acme", "beta"])
    expect(Subject.fromClaims({ organization: "acme" }).organizations.map((o) => o.alias)).toEqual(["acme"])
    expect(Subject.fromClaims({ organization: [{ alias: "acme", type: "dso" }] }).organizations[0].types)
      .toEqual(["dso"])
    expect(Subject.fromClaims({ organization: null }).organizations).toEqual([])
  })

  it("keeps the raw claims and offers the policy input shape", () => {
    const claims = { sub: "u", organization: ["acme"], custom: { nested: true } }
    const subject = Subject.fromClaims(claims)
    expect(subject.claims).toEqual(claims)
    expect(Subject.toPolicyInput(subject)).toEqual({
      id: "u",
      type: "user",
      groups: [],
      scopes: [],
      claims
    })
  })

  it("round-trips through its schema (for RPC and caches)", () => {
    const subject = Subject.fromClaims({ sub: "u", groups: ["/a"], organization: { acme: { type: ["dso"] } } })
    const encoded = Schema.encodeSync(Subject.Subject)(subject)
    const decoded = Schema.decodeUnknownSync(Subject.Subject)(JSON.parse(JSON.stringify(encoded)))
    expect(decoded).toEqual(subject)
    expect(decoded.organizationsOfType("dso")).toHaveLength(1)
  })
})
