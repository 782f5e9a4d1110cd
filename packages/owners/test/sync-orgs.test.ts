/**
 * `owners sync-orgs` end to end: the real command, HTTP client and file loading against a local
 * server speaking the Keycloak admin API (test/KeycloakFake.ts).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as path from "node:path"
import { runCommand } from "./CliHarness.js"
import { KeycloakOrganizations } from "../src/KeycloakOrganizations.js"
import { syncOrganizations } from "../src/OrganizationSync.js"
import { type FakeKeycloak, startFakeKeycloak } from "./KeycloakFake.js"

const SECRET = "s3cr3t-client-secret-value"
const PASSWORD = "adm1n-password-value"

const registryYaml = `owners:
  - id: acme
    type: schema:Corporation
    name: Acme Energy
    url: https://acme.example.org
    organization:
      create: true
      role: rec
      attributes:
        region: north
  - id: city
    type: schema:GovernmentOrganization
    name: City of Springfield
    organization:
      create: true
      role: dso
  - id: coop
    type: schema:NGO
    name: Solar Coop
    organization:
      create: true
  - id: lab
    type: schema:ResearchOrganization
    name: Research Lab
`

const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.gen(function*() {
    const result = yield* runCommand(args, env)
    // Whatever happened, no secret may reach the output.
    for (const secret of [SECRET, PASSWORD]) {
      expect(result.out).not.toContain(secret)
      expect(result.err).not.toContain(secret)
    }
    return result
  })

/** A fake Keycloak, a registry file, and the env that connects them. */
const setup = (registry = registryYaml) =>
  Effect.gen(function*() {
    const keycloak = yield* startFakeKeycloak({
      realm: "rec",
      clients: { "owners-sync": SECRET },
      users: { admin: PASSWORD }
    })
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "owners-sync-" })
    const file = path.join(dir, "owners.yaml")
    yield* fs.writeFileString(file, registry)
    const env = {
      KEYCLOAK_BASE_URL: keycloak.url,
      KEYCLOAK_REALM: "rec",
      KEYCLOAK_ADMIN_CLIENT_ID: "owners-sync",
      KEYCLOAK_ADMIN_CLIENT_SECRET: SECRET
    }
    return { keycloak, file, dir, env }
  }).pipe(Effect.provide(NodeFileSystem.layer))

const byAlias = (keycloak: FakeKeycloak, alias: string) =>
  [...keycloak.organizations.values()].find((organization) => organization.alias === alias)

/** `city` exists with an old name, a wrong role, an unmanaged attribute and a domain; `coop` is up to date. */
const seedExisting = (keycloak: FakeKeycloak) => {
  keycloak.seed({
    name: "Springfield (old name)",
    alias: "city",
    enabled: true,
    attributes: { type: ["org"], "managed-by-admin": ["keep me"] },
    domains: [{ name: "springfield.example.org", verified: true }]
  })
  keycloak.seed({ name: "Solar Coop", alias: "coop", enabled: true, attributes: { type: ["org"] }, domains: [] })
}

describe("owners sync-orgs", () => {
  it.scoped("creates missing organizations, updates differing ones and skips the rest", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      seedExisting(keycloak)

      const result = yield* run(["sync-orgs", file], env)

      expect(result.code).toBe(0)
      expect(result.out).toContain("summary: 1 created, 1 updated, 1 skipped, 0 failed")
      expect(result.out).toContain("not provisioned (no organization.create): lab")
      expect(result.out).toMatch(/^updated\s+city\s+name: "Springfield \(old name\)" -> "City of Springfield"; attributes\.type: \["org"\] -> \["dso"\]$/m)
      expect(result.out).toMatch(/^skipped\s+coop\s+up to date$/m)
      expect(result.err).toBe("")

      expect(byAlias(keycloak, "acme")).toMatchObject({
        name: "Acme Energy",
        enabled: true,
        description: "https://acme.example.org",
        attributes: { type: ["rec"], region: ["north"] }
      })
      // The update kept what the registry does not manage (Keycloak's PUT replaces everything).
      expect(byAlias(keycloak, "city")).toMatchObject({
        name: "City of Springfield",
        attributes: { type: ["dso"], "managed-by-admin": ["keep me"] },
        domains: [{ name: "springfield.example.org", verified: true }]
      })
      expect(byAlias(keycloak, "lab")).toBeUndefined()
      expect(keycloak.writes().map((request) => request.method)).toEqual(["POST", "PUT"])
      // Listing asked for full representations (attributes included).
      const list = keycloak.requests.find((request) => request.method === "GET" && request.path.endsWith("/organizations"))
      expect(list?.query.get("briefRepresentation")).toBe("false")
    }))

  it.scoped("changes nothing when run again: everything is skipped", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      seedExisting(keycloak)
      expect((yield* run(["sync-orgs", file], env)).code).toBe(0)
      const writesAfterFirstRun = keycloak.writes().length
      const snapshot = structuredClone([...keycloak.organizations.values()])

      const again = yield* run(["sync-orgs", file], env)

      expect(again.code).toBe(0)
      expect(again.out).toContain("summary: 0 created, 0 updated, 3 skipped, 0 failed")
      expect(keycloak.writes().length).toBe(writesAfterFirstRun)
      expect([...keycloak.organizations.values()]).toEqual(snapshot)
    }))

  it.scoped("reports a failing create, still handles the other owners, and exits 1", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      seedExisting(keycloak)
      keycloak.failCreate.add("acme")

      const result = yield* run(["sync-orgs", file], env)

      expect(result.code).toBe(1)
      expect(result.err).toMatch(
        /^failed\s+acme\s+create organization acme failed \(HTTP 500\): simulated storage failure$/m
      )
      expect(result.out).toContain("summary: 0 created, 1 updated, 1 skipped, 1 failed")
      expect(byAlias(keycloak, "acme")).toBeUndefined()
      expect(byAlias(keycloak, "city")?.name).toBe("City of Springfield")
    }))

  it.scoped("prints the plan and writes nothing with --dry-run", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      seedExisting(keycloak)
      const before = structuredClone([...keycloak.organizations.values()])

      const result = yield* run(["sync-orgs", "--dry-run", file], env)

      expect(result.code).toBe(0)
      expect(result.out).toContain("dry run: plan for realm rec, nothing is written")
      expect(result.out).toMatch(/^would create\s+acme\s+name "Acme Energy"; type=rec region=north$/m)
      expect(result.out).toMatch(/^would update\s+city\s+name: .* -> "City of Springfield"; attributes\.type: \["org"\] -> \["dso"\]$/m)
      expect(result.out).toMatch(/^unchanged\s+coop\s+up to date$/m)
      expect(result.out).toContain("summary (dry run): 1 to create, 1 to update, 1 unchanged")
      expect(keycloak.writes()).toEqual([])
      expect([...keycloak.organizations.values()]).toEqual(before)

      // -n is the short form.
      expect((yield* run(["sync-orgs", "-n", file], env)).code).toBe(0)
      expect(keycloak.writes()).toEqual([])
    }))

  it.scoped("uses the password grant against the master realm with admin user credentials", () =>
    Effect.gen(function*() {
      const { file, keycloak } = yield* setup()
      const result = yield* run(["sync-orgs", file], {
        KEYCLOAK_BASE_URL: keycloak.url,
        KEYCLOAK_REALM: "rec",
        KEYCLOAK_ADMIN_USER: "admin",
        KEYCLOAK_ADMIN_PASSWORD: PASSWORD
      })
      expect(result.code).toBe(0)
      expect(result.out).toContain("summary: 3 created, 0 updated, 0 skipped, 0 failed")
      const tokenRequest = keycloak.requests.find((request) => request.path.endsWith("/token"))
      expect(tokenRequest?.path).toBe("/realms/master/protocol/openid-connect/token")
      expect(tokenRequest?.form?.get("grant_type")).toBe("password")
      expect(tokenRequest?.form?.get("client_id")).toBe("admin-cli")
    }))

  it.scoped("lets flags override the environment", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      const result = yield* run(
        ["sync-orgs", "--realm", "rec", "--base-url", keycloak.url, "--admin-client-secret", SECRET, file],
        { ...env, KEYCLOAK_REALM: "wrong", KEYCLOAK_BASE_URL: "http://127.0.0.1:1", KEYCLOAK_ADMIN_CLIENT_SECRET: "wrong" }
      )
      expect(result.code).toBe(0)
      expect(keycloak.organizations.size).toBe(3)
    }))

  it.scoped("fails with exit 1 and Keycloak's reason when the token is refused, without printing the secret", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup()
      const result = yield* run(["sync-orgs", file], { ...env, KEYCLOAK_ADMIN_CLIENT_SECRET: `${SECRET}-wrong` })
      expect(result.code).toBe(1)
      expect(result.err).toBe(
        "owners: sync-orgs: token request to realm rec failed (HTTP 401): Invalid client or Invalid client credentials"
      )
      expect(result.err).not.toContain(`${SECRET}-wrong`)
      expect(keycloak.writes()).toEqual([])
    }))

  it.scoped("fails with exit 1 when Keycloak cannot be reached", () =>
    Effect.gen(function*() {
      const { env, file } = yield* setup()
      const result = yield* run(["sync-orgs", file], { ...env, KEYCLOAK_BASE_URL: "http://127.0.0.1:9" })
      expect(result.code).toBe(1)
      expect(result.err).toMatch(/^owners: sync-orgs: token request to realm rec failed: /)
    }))

  it.scoped("exits 2 and names every missing setting", () =>
    Effect.gen(function*() {
      const { file } = yield* setup()
      const result = yield* run(["sync-orgs", file], { KEYCLOAK_ADMIN_PASSWORD: PASSWORD })
      expect(result.code).toBe(2)
      expect(result.err).toContain("KEYCLOAK_BASE_URL (or --base-url) is required")
      expect(result.err).toContain("KEYCLOAK_REALM (or --realm) is required")
      expect(result.err).toContain("KEYCLOAK_ADMIN_USER is required with KEYCLOAK_ADMIN_PASSWORD")
    }))

  it.scoped("has nothing to do, and needs no connection, when no owner asks for an organization", () =>
    Effect.gen(function*() {
      const { file } = yield* setup("owners:\n  - { id: lab, type: schema:NGO, name: Lab, organization: { create: false } }\n")
      const result = yield* run(["sync-orgs", file], {})
      expect(result).toEqual({ code: 0, out: "nothing to sync: no owner has organization.create: true", err: "" })
    }))

  it.scoped("refuses to sync an invalid registry, listing its problems", () =>
    Effect.gen(function*() {
      const { env, file, keycloak } = yield* setup("owners:\n  - { id: Bad, type: schema:NGO, name: X }\n")
      const result = yield* run(["sync-orgs", file], env)
      expect(result.code).toBe(1)
      expect(result.err).toContain(`${file}:2:11 $.owners[0].id: expected lowercase kebab-case`)
      expect(keycloak.requests).toEqual([])
    }))

  it.scoped("syncs the merged registry of a file and its overlay (withdrawn organizations are left alone)", () =>
    Effect.gen(function*() {
      const { env, file, dir, keycloak } = yield* setup()
      const fs = yield* FileSystem.FileSystem
      const overlay = path.join(dir, "owners.local.yaml")
      yield* fs.writeFileString(
        overlay,
        "owners:\n  - { id: city, type: schema:GovernmentOrganization, name: City, organization: { create: false } }\n"
      )
      const result = yield* run(["sync-orgs", file, overlay], env)
      expect(result.code).toBe(0)
      expect([...keycloak.organizations.values()].map((organization) => organization.alias).sort()).toEqual(["acme", "coop"])
      expect(result.out).toContain("not provisioned (no organization.create): city, lab")
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("Keycloak organizations client", () => {
  const settings = (keycloak: FakeKeycloak) => ({
    baseUrl: keycloak.url,
    realm: "rec",
    tokenRealm: "rec",
    credentials: { _tag: "ClientCredentials" as const, clientId: "owners-sync", clientSecret: Redacted.make(SECRET) }
  })

  it.scoped("reads every page of organizations", () =>
    Effect.gen(function*() {
      const keycloak = yield* startFakeKeycloak({ realm: "rec", clients: { "owners-sync": SECRET } })
      for (const name of ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]) {
        keycloak.seed({ name, alias: name.toLowerCase(), enabled: true, attributes: { type: ["org"] }, domains: [] })
      }
      const admin = yield* KeycloakOrganizations.pipe(
        Effect.provide(KeycloakOrganizations.layer(settings(keycloak), { pageSize: 2 }))
      )
      const all = yield* admin.list
      expect(all.map((organization) => organization.alias)).toEqual(["alpha", "bravo", "charlie", "delta", "echo"])
      const pages = keycloak.requests.filter((request) => request.method === "GET")
      expect(pages.map((request) => request.query.get("first"))).toEqual(["0", "2", "4"])
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.scoped("gets a new token once after a 401 and reuses a valid one otherwise", () =>
    Effect.gen(function*() {
      const keycloak = yield* startFakeKeycloak({ realm: "rec", clients: { "owners-sync": SECRET } })
      const admin = yield* KeycloakOrganizations.pipe(Effect.provide(KeycloakOrganizations.layer(settings(keycloak))))
      const tokenRequests = () => keycloak.requests.filter((request) => request.path.endsWith("/token")).length
      yield* admin.list
      yield* admin.list
      expect(tokenRequests()).toBe(1)
      keycloak.revokeTokens()
      yield* admin.list
      expect(tokenRequests()).toBe(2)
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.scoped("matches organizations by alias even when their name changed in the registry", () =>
    Effect.gen(function*() {
      const keycloak = yield* startFakeKeycloak({ realm: "rec", clients: { "owners-sync": SECRET } })
      keycloak.seed({ name: "Old Name", alias: "acme", enabled: true, attributes: { type: ["org"] }, domains: [] })
      const report = yield* syncOrganizations(
        [{ id: "acme", type: "schema:NGO", name: "New Name", aliases: [], organization: { create: true } }],
        { dryRun: false }
      ).pipe(Effect.provide(KeycloakOrganizations.layer(settings(keycloak))))
      expect(report.counts).toEqual({ created: 0, updated: 1, skipped: 0, failed: 0 })
      expect([...keycloak.organizations.values()].map((organization) => organization.name)).toEqual(["New Name"])
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
})
