/**
 * How `owners sync-orgs` reaches Keycloak's admin API. Read from the environment
 * (`Config.ts`); command-line flags override single values. Secrets stay `Redacted` from the
 * moment they are read.
 *
 * | env                              | flag                    | meaning |
 * |----------------------------------|-------------------------|---------|
 * | `KEYCLOAK_BASE_URL`              | `--base-url`            | server URL, e.g. `https://idp.example.org` (a path prefix such as `/auth` is kept) |
 * | `KEYCLOAK_REALM`                 | `--realm`               | realm whose organizations are managed |
 * | `KEYCLOAK_ADMIN_REALM`           | `--admin-realm`         | realm that issues the admin token (default below) |
 * | `KEYCLOAK_ADMIN_CLIENT_ID`       | `--admin-client-id`     | admin client (client credentials), or the client for the password grant (default `admin-cli`) |
 * | `KEYCLOAK_ADMIN_CLIENT_SECRET`   | `--admin-client-secret` | its secret: selects the client-credentials grant |
 * | `KEYCLOAK_ADMIN_USER`            | `--admin-user`          | admin user name: selects the password grant |
 * | `KEYCLOAK_ADMIN_PASSWORD`        | `--admin-password`      | admin user's password |
 *
 * With a client secret the client-credentials grant is used (the client's service account
 * needs `realm-management` `manage-realm`), and the token comes from the managed realm unless
 * `KEYCLOAK_ADMIN_REALM` says otherwise. Without one, the password grant is used with the
 * admin user, from the `master` realm unless `KEYCLOAK_ADMIN_REALM` says otherwise.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { isHttpUrl, KeycloakEnv } from "./Config.js"

export interface KeycloakFlags {
  readonly baseUrl?: string | undefined
  readonly realm?: string | undefined
  readonly adminRealm?: string | undefined
  readonly adminClientId?: string | undefined
  readonly adminClientSecret?: string | undefined
  readonly adminUser?: string | undefined
  readonly adminPassword?: string | undefined
}

export type AdminCredentials =
  | {
    readonly _tag: "ClientCredentials"
    readonly clientId: string
    readonly clientSecret: Redacted.Redacted<string>
  }
  | {
    readonly _tag: "Password"
    readonly clientId: string
    readonly username: string
    readonly password: Redacted.Redacted<string>
  }

export interface KeycloakSettings {
  /** Without a trailing slash. */
  readonly baseUrl: string
  readonly realm: string
  /** The realm whose token endpoint issues the admin token. */
  readonly tokenRealm: string
  readonly credentials: AdminCredentials
}

/** The Keycloak connection is not configured well enough to run. */
export class KeycloakSettingsInvalid extends Schema.TaggedError<KeycloakSettingsInvalid>()(
  "KeycloakSettingsInvalid",
  { problems: Schema.Array(Schema.String) }
) {
  override get message(): string {
    return `Keycloak connection not configured: ${this.problems.join("; ")}`
  }
}

export const DEFAULT_PASSWORD_GRANT_CLIENT = "admin-cli"
export const DEFAULT_PASSWORD_GRANT_REALM = "master"

/** Reads the settings from the environment, with `flags` overriding single values. */
export const keycloakSettings = (
  flags: KeycloakFlags = {}
): Effect.Effect<KeycloakSettings, KeycloakSettingsInvalid> =>
  Effect.gen(function*() {
    const read = yield* KeycloakEnv.pipe(
      Effect.mapError((error) => new KeycloakSettingsInvalid({ problems: [String(error)] }))
    )
    const pick = (flag: string | undefined, fromEnv: Option.Option<string>) =>
      flag !== undefined && flag !== "" ? Option.some(flag) : fromEnv
    const pickSecret = (flag: string | undefined, fromEnv: Option.Option<Redacted.Redacted<string>>) =>
      flag !== undefined && flag !== "" ? Option.some(Redacted.make(flag)) : fromEnv

    const baseUrl = pick(flags.baseUrl, read.baseUrl)
    const realm = pick(flags.realm, read.realm)
    const adminRealm = pick(flags.adminRealm, read.adminRealm)
    const clientId = pick(flags.adminClientId, read.adminClientId)
    const clientSecret = pickSecret(flags.adminClientSecret, read.adminClientSecret)
    const user = pick(flags.adminUser, read.adminUser)
    const password = pickSecret(flags.adminPassword, read.adminPassword)

    const problems: Array<string> = []
    if (Option.isNone(baseUrl)) problems.push("KEYCLOAK_BASE_URL (or --base-url) is required")
    else if (!isHttpUrl(baseUrl.value)) problems.push(`KEYCLOAK_BASE_URL must be an http(s) URL, got ${baseUrl.value}`)
    if (Option.isNone(realm)) problems.push("KEYCLOAK_REALM (or --realm) is required")

    let credentials: AdminCredentials | undefined
    if (Option.isSome(clientSecret)) {
      if (Option.isNone(clientId)) {
        problems.push("KEYCLOAK_ADMIN_CLIENT_ID is required with KEYCLOAK_ADMIN_CLIENT_SECRET")
      } else {
        credentials = { _tag: "ClientCredentials", clientId: clientId.value, clientSecret: clientSecret.value }
      }
    } else if (Option.isSome(user) || Option.isSome(password)) {
      if (Option.isNone(user)) problems.push("KEYCLOAK_ADMIN_USER is required with KEYCLOAK_ADMIN_PASSWORD")
      else if (Option.isNone(password)) problems.push("KEYCLOAK_ADMIN_PASSWORD is required with KEYCLOAK_ADMIN_USER")
      else {
        credentials = {
          _tag: "Password",
          clientId: Option.getOrElse(clientId, () => DEFAULT_PASSWORD_GRANT_CLIENT),
          username: user.value,
          password: password.value
        }
      }
    } else {
      problems.push(
        "admin credentials are required: KEYCLOAK_ADMIN_CLIENT_ID and KEYCLOAK_ADMIN_CLIENT_SECRET, " +
          "or KEYCLOAK_ADMIN_USER and KEYCLOAK_ADMIN_PASSWORD"
      )
    }

    if (problems.length > 0 || credentials === undefined || Option.isNone(baseUrl) || Option.isNone(realm)) {
      return yield* new KeycloakSettingsInvalid({ problems })
    }
    const defaultTokenRealm = credentials._tag === "Password" ? DEFAULT_PASSWORD_GRANT_REALM : realm.value
    return {
      baseUrl: baseUrl.value.replace(/\/+$/, ""),
      realm: realm.value,
      tokenRealm: Option.getOrElse(adminRealm, () => defaultTokenRealm),
      credentials
    }
  })
