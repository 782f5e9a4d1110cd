/**
 * Every environment variable this package reads.
 *
 * | variable                       | default                  | used by |
 * |--------------------------------|--------------------------|---------|
 * | `OWNERS_FILE`                  | `./owners.yaml`          | `Owners` service; CLI when no FILE is given. Its `.local` sibling is loaded on top when present |
 * | `PLATFORM_BASE_URL`            | `http://localhost:8004`  | IRIs of owners without DID or URL: `{PLATFORM_BASE_URL}/owners/{id}` |
 * | `KEYCLOAK_BASE_URL`            | (required for sync)      | `owners sync-orgs` |
 * | `KEYCLOAK_REALM`               | (required for sync)      | realm whose organizations are managed |
 * | `KEYCLOAK_ADMIN_REALM`         | see `KeycloakSettings`   | realm issuing the admin token |
 * | `KEYCLOAK_ADMIN_CLIENT_ID`     | `admin-cli` for the password grant | admin client |
 * | `KEYCLOAK_ADMIN_CLIENT_SECRET` | none                     | client-credentials grant (secret, `Redacted`) |
 * | `KEYCLOAK_ADMIN_USER`          | none                     | password grant user |
 * | `KEYCLOAK_ADMIN_PASSWORD`      | none                     | password grant password (secret, `Redacted`) |
 */
import { Config } from "effect"

export const DEFAULT_OWNERS_FILE = "owners.yaml"

/** The community registry's address: it is the service that publishes organizations. */
export const DEFAULT_PLATFORM_BASE_URL = "http://localhost:8004"

export const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)

/** `PLATFORM_BASE_URL`, checked to be an absolute http(s) URL. */
export const PlatformBaseUrl = Config.string("PLATFORM_BASE_URL").pipe(
  Config.withDefault(DEFAULT_PLATFORM_BASE_URL),
  Config.validate({ message: "PLATFORM_BASE_URL must be an absolute http(s) URL", validation: isHttpUrl })
)

/** `OWNERS_FILE` when set: unset and set-but-empty are both "not configured". */
export const OwnersFileConfig = Config.option(Config.nonEmptyString("OWNERS_FILE"))

export const OwnersConfig = Config.all({ file: OwnersFileConfig, baseUrl: PlatformBaseUrl })

/** The Keycloak connection as the environment states it; flags may override each value. */
export const KeycloakEnv = Config.all({
  baseUrl: Config.option(Config.nonEmptyString("KEYCLOAK_BASE_URL")),
  realm: Config.option(Config.nonEmptyString("KEYCLOAK_REALM")),
  adminRealm: Config.option(Config.nonEmptyString("KEYCLOAK_ADMIN_REALM")),
  adminClientId: Config.option(Config.nonEmptyString("KEYCLOAK_ADMIN_CLIENT_ID")),
  adminClientSecret: Config.option(Config.redacted(Config.nonEmptyString("KEYCLOAK_ADMIN_CLIENT_SECRET"))),
  adminUser: Config.option(Config.nonEmptyString("KEYCLOAK_ADMIN_USER")),
  adminPassword: Config.option(Config.redacted(Config.nonEmptyString("KEYCLOAK_ADMIN_PASSWORD")))
})


