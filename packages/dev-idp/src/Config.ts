/**
 * Every environment variable of the dev identity provider.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `DEV_IDP_PORT` | 8080 | port (the platform launcher reads this one) |
 * | `PORT` | – | overrides `DEV_IDP_PORT` when the IdP runs as its own process |
 * | `HOST` | `127.0.0.1` | bind address of its own process (`0.0.0.0`: every interface) |
 * | `DEV_IDP_ISSUER` | `http://localhost:<port>` | issuer URL, when services reach the IdP by another name |
 * | `DEV_IDP_TOKEN_TTL_SECONDS` | 3600 | access and id token lifetime |
 * | `DEV_IDP_REFRESH_TTL_SECONDS` | 28800 | refresh token lifetime |
 * | `DEV_IDP_IDENTITIES` | `dev/identities.yaml` of the repository | users, organizations, clients |
 * | `DEV_IDP_KEY_FILE` | – (a new key per start) | JWK file keeping the signing key across restarts; created when missing |
 */
import { Config, Option } from "effect"
import type { DevIdpOptions } from "./DevIdp.js"

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

const port = (name: string) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a port number (0-65535)`, validation: (n) => n >= 0 && n <= 65535 })
  )

/**
 * Options from the environment. `standalone` is the IdP's own process (`main.ts`), where the
 * generic `PORT` and `HOST` apply; embedded in the launcher only the `DEV_IDP_*` names do (the
 * launcher hands the IdP its own bind address).
 */
export const devIdpConfig = (options: { readonly standalone: boolean }): Config.Config<DevIdpOptions> =>
  Config.all({
    devIdpPort: port("DEV_IDP_PORT").pipe(Config.withDefault(8080)),
    port: options.standalone ? Config.option(port("PORT")) : Config.succeed(Option.none<number>()),
    // Unset: `DevIdp`'s default, the loopback interface (anyone who reaches the IdP can mint
    // admin tokens with the public secrets), with `localhost` in the issuer.
    host: options.standalone ? Config.option(Config.nonEmptyString("HOST")) : Config.succeed(Option.none<string>()),
    issuer: Config.option(Config.url("DEV_IDP_ISSUER")),
    tokenTtlSeconds: positive("DEV_IDP_TOKEN_TTL_SECONDS", 3600),
    refreshTtlSeconds: positive("DEV_IDP_REFRESH_TTL_SECONDS", 28_800),
    identities: Config.option(Config.nonEmptyString("DEV_IDP_IDENTITIES")),
    keyFile: Config.option(Config.nonEmptyString("DEV_IDP_KEY_FILE"))
  }).pipe(
    Config.map((c): DevIdpOptions => ({
      port: Option.getOrElse(c.port, () => c.devIdpPort),
      host: Option.getOrUndefined(c.host),
      issuer: Option.getOrUndefined(Option.map(c.issuer, (url) => url.href.replace(/\/$/, ""))),
      tokenTtlSeconds: c.tokenTtlSeconds,
      refreshTtlSeconds: c.refreshTtlSeconds,
      identities: Option.getOrUndefined(c.identities),
      keyFile: Option.getOrUndefined(c.keyFile)
    }))
  )
