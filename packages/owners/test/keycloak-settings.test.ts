import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { type KeycloakFlags, keycloakSettings } from "../src/KeycloakSettings.js"

const settings = (env: Record<string, string>, flags: KeycloakFlags = {}) =>
  keycloakSettings(flags).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

const connection = { KEYCLOAK_BASE_URL: "https://idp.example.org/auth/", KEYCLOAK_REALM: "rec" }

describe("Keycloak settings", () => {
  it.effect("use the client-credentials grant from the managed realm when a client secret is set", () =>
    Effect.gen(function*() {
      const result = yield* settings({
        ...connection,
        KEYCLOAK_ADMIN_CLIENT_ID: "owners-sync",
        KEYCLOAK_ADMIN_CLIENT_SECRET: "client-secret",
        // A secret wins over user credentials that happen to be set too.
        KEYCLOAK_ADMIN_USER: "admin",
        KEYCLOAK_ADMIN_PASSWORD: "password"
      })
      expect(result.baseUrl).toBe("https://idp.example.org/auth")
      expect(result.tokenRealm).toBe("rec")
      expect(result.credentials._tag).toBe("ClientCredentials")
      if (result.credentials._tag === "ClientCredentials") {
        expect(result.credentials.clientId).toBe("owners-sync")
        expect(Redacted.value(result.credentials.clientSecret)).toBe("client-secret")
      }
      expect(JSON.stringify(result)).not.toContain("client-secret")
    }))

  it.effect("use the password grant with admin-cli from master for an admin user, unless told otherwise", () =>
    Effect.gen(function*() {
      const user = { ...connection, KEYCLOAK_ADMIN_USER: "admin", KEYCLOAK_ADMIN_PASSWORD: "pw" }
      const plain = yield* settings(user)
      expect(plain.tokenRealm).toBe("master")
      expect(plain.credentials).toMatchObject({ _tag: "Password", clientId: "admin-cli", username: "admin" })
      const custom = yield* settings({ ...user, KEYCLOAK_ADMIN_REALM: "ops", KEYCLOAK_ADMIN_CLIENT_ID: "ops-cli" })
      expect(custom.tokenRealm).toBe("ops")
      expect(custom.credentials.clientId).toBe("ops-cli")
    }))

  it.effect("let flags override single environment values", () =>
    Effect.gen(function*() {
      const result = yield* settings(
        { ...connection, KEYCLOAK_ADMIN_USER: "admin", KEYCLOAK_ADMIN_PASSWORD: "pw" },
        { realm: "other", baseUrl: "http://localhost:8080", adminPassword: "from-flag" }
      )
      expect(result).toMatchObject({ baseUrl: "http://localhost:8080", realm: "other", tokenRealm: "master" })
      expect(result.credentials._tag === "Password" && Redacted.value(result.credentials.password)).toBe("from-flag")
    }))

  it.effect("reject incomplete or malformed settings, naming every problem", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(settings({}))
      expect(missing.problems).toEqual([
        "KEYCLOAK_BASE_URL (or --base-url) is required",
        "KEYCLOAK_REALM (or --realm) is required",
        "admin credentials are required: KEYCLOAK_ADMIN_CLIENT_ID and KEYCLOAK_ADMIN_CLIENT_SECRET, " +
        "or KEYCLOAK_ADMIN_USER and KEYCLOAK_ADMIN_PASSWORD"
      ])
      const malformed = yield* Effect.flip(settings({
        KEYCLOAK_BASE_URL: "idp.example.org",
        KEYCLOAK_REALM: "rec",
        KEYCLOAK_ADMIN_CLIENT_SECRET: "s"
      }))
      expect(malformed.problems).toEqual([
        "KEYCLOAK_BASE_URL must be an http(s) URL, got idp.example.org",
        "KEYCLOAK_ADMIN_CLIENT_ID is required with KEYCLOAK_ADMIN_CLIENT_SECRET"
      ])
      expect(malformed.message).not.toContain(": s")
    }))
})
