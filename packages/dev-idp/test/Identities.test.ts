import { describe, expect, it } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import * as YAML from "yaml"
import * as fs from "node:fs"
import { grantScopes } from "../src/Claims.js"
import { decodeIdentities, defaultIdentitiesPath, loadIdentities } from "../src/Identities.js"

const repositoryFile = () => YAML.parse(fs.readFileSync(defaultIdentitiesPath, "utf8")) as Record<string, unknown>

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures poke into the untyped parsed YAML
type Fixture = Record<string, any>

const problemsOf = (mutate: (file: Fixture) => void) =>
  Effect.gen(function*() {
    const file = repositoryFile()
    mutate(file)
    return (yield* Effect.flip(decodeIdentities(file, "fixture"))).message
  })

describe("dev/identities.yaml", () => {
  it.effect("loads and says dev-only on every secret", () =>
    Effect.gen(function*() {
      const identities = yield* loadIdentities().pipe(Effect.provide(NodeFileSystem.layer))
      expect(identities.users.size).toBeGreaterThanOrEqual(9)
      for (const client of identities.clients.values()) {
        if (client.secret !== undefined) expect(client.secret).toMatch(/^dev-only-/)
      }
      expect(fs.readFileSync(defaultIdentitiesPath, "utf8")).toContain("DEVELOPMENT ONLY")
      expect([...identities.organizations.values()].filter((o) => o.type === "dso").length).toBeGreaterThanOrEqual(2)
    }))

  it.effect("rejects unknown organizations, duplicate names and misspelled keys", () =>
    Effect.gen(function*() {
      expect(yield* problemsOf((f) => f.users[0].organizations = ["dso-nowhere"])).toContain("unknown organization 'dso-nowhere'")
      expect(yield* problemsOf((f) => f.users[1].username = f.users[0].username)).toContain("duplicate name")
      expect(yield* problemsOf((f) => f.clients.push({ ...f.clients[2], client_id: "viewer" }))).toContain("duplicate name")
      expect(yield* problemsOf((f) => f.users[0].organisations = [])).toContain("organisations")
      expect(yield* problemsOf((f) => f.users[0].email = "not-an-email")).toContain("email")
    }))

  it.effect("rejects inconsistent clients", () =>
    Effect.gen(function*() {
      expect(yield* problemsOf((f) => delete f.clients[2].secret)).toContain("needs a secret")
      expect(yield* problemsOf((f) => delete f.clients[2].service_account_id)).toContain("service_account_id")
      expect(yield* problemsOf((f) => f.default_client = "svc-grid")).toContain("password grant")
      expect(yield* problemsOf((f) => f.clients[0].grants.push("client_credentials"))).toContain("public client")
      expect(yield* problemsOf((f) => f.clients[0].grants.push("implicit"))).toContain("implicit")
    }))
})

describe("scope grants", () => {
  it.effect("grant all client scopes by default, exactly the requested ones otherwise", () =>
    Effect.gen(function*() {
      const identities = yield* loadIdentities().pipe(Effect.provide(NodeFileSystem.layer))
      const grid = identities.clients.get("svc-grid")!
      expect(grantScopes(grid, undefined)).toEqual({ _tag: "Granted", scopes: grid.scopes, openid: false })
      expect(grantScopes(grid, "openid")).toEqual({ _tag: "Granted", scopes: grid.scopes, openid: true })
      expect(grantScopes(grid, "dt.read  mqtt.read")).toEqual({ _tag: "Granted", scopes: ["dt.read", "mqtt.read"], openid: false })
      expect(grantScopes(grid, "dt.read dt.write")).toEqual({ _tag: "Refused", refused: ["dt.write"] })
    }))
})

describe("README's client table", () => {
  // The table is what people read to pick a client; a scope added to the file and not to the
  // table (svc-flexibility's registry.read once) sends them to the wrong client.
  it.effect("lists every client of dev/identities.yaml with exactly its scopes", () =>
    Effect.gen(function*() {
      const identities = yield* loadIdentities().pipe(Effect.provide(NodeFileSystem.layer))
      const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
      const rows = new Map<string, Array<string>>()
      for (const match of readme.matchAll(/^\| `([a-z0-9-]+)` \| (?:public|confidential|service)[^|]* \| ([^|]*) \|$/gm)) {
        const scopes = match[2]!.trim()
        rows.set(match[1]!, /^every platform scope$|^– /.test(scopes) ? [scopes] : scopes.split(/\s+/).filter((s) => s !== ""))
      }
      expect([...rows.keys()].sort()).toEqual([...identities.clients.keys()].sort())
      const everyScope = new Set([...identities.clients.values()].flatMap((c) => c.scopes))
      for (const client of identities.clients.values()) {
        const row = rows.get(client.clientId)!
        if (row[0] === "every platform scope") expect([...client.scopes].sort()).toEqual([...everyScope].sort())
        else if (row[0]?.startsWith("– ")) expect(client.scopes).toEqual([])
        else expect([...row].sort(), client.clientId).toEqual([...client.scopes].sort())
      }
    }))
})
