/**
 * Getting a token for a named identity from a running dev identity provider, the way a real
 * client would: OIDC discovery, then the password grant for a user (through the file's
 * `default_client` or `--client`) or the client_credentials grant for a service client, with
 * the dev-only credentials of dev/identities.yaml.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Effect, Schema } from "effect"
import type { Identities } from "./Identities.js"

export class TokenCliError extends Schema.TaggedError<TokenCliError>()("TokenCliError", {
  message: Schema.String
}) {}

const Discovery = Schema.Struct({ issuer: Schema.String, token_endpoint: Schema.String })

export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.String,
  expires_in: Schema.Number,
  scope: Schema.optional(Schema.String),
  id_token: Schema.optional(Schema.String),
  refresh_token: Schema.optional(Schema.String)
})
export type TokenResponse = typeof TokenResponse.Type

const OAuthErrorBody = Schema.Struct({ error: Schema.String, error_description: Schema.optional(Schema.String) })

export interface TokenRequest {
  /** Issuer / discovery base URL of the running provider. */
  readonly baseUrl: string
  readonly identities: Identities
  /** A username or a client id of `identities`. */
  readonly name: string
  /** For users: the client to log in through (default: the file's `default_client`). */
  readonly client?: string | undefined
  /** The `scope` parameter. */
  readonly scope?: string | undefined
}

/** The form and the credentials of the grant that gets a token for `request.name`. */
export const grantRequest = (
  request: Pick<TokenRequest, "identities" | "name" | "client" | "scope">
): Effect.Effect<{ readonly form: Record<string, string>; readonly basic?: readonly [string, string] }, TokenCliError> =>
  Effect.gen(function*() {
    const { identities, name } = request
    const found = identities.lookup(name)
    if (found === undefined) {
      return yield* new TokenCliError({ message: `'${name}' is neither a user nor a client (see --list)` })
    }
    const scope: Record<string, string> = request.scope === undefined ? {} : { scope: request.scope }
    if (found._tag === "Client") {
      const client = found.client
      if (request.client !== undefined) {
        return yield* new TokenCliError({ message: "--client applies to users only" })
      }
      if (!client.grants.includes("client_credentials") || client.secret === undefined) {
        return yield* new TokenCliError({ message: `client '${name}' cannot use client_credentials; log in a user through it with --client` })
      }
      return { form: { grant_type: "client_credentials", ...scope }, basic: [client.clientId, client.secret] as const }
    }
    const clientId = request.client ?? identities.defaultClient.clientId
    const client = identities.clients.get(clientId)
    if (client === undefined) return yield* new TokenCliError({ message: `unknown client '${clientId}'` })
    const form: Record<string, string> = { grant_type: "password", username: found.user.username, password: found.user.password, ...scope }
    return client.secret === undefined
      ? { form: { ...form, client_id: client.clientId } }
      : { form, basic: [client.clientId, client.secret] as const }
  })

const basicHeader = ([id, secret]: readonly [string, string]) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** Discovery, then the token endpoint. */
export const fetchToken = (request: TokenRequest): Effect.Effect<TokenResponse, TokenCliError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = request.baseUrl.replace(/\/$/, "")
    const unreachable = (error: { readonly message: string }) =>
      new TokenCliError({
        message: `no identity provider answers at ${base} (${error.message}); start one with ` +
          "`pnpm --filter @rec/dev-idp start` or set PLATFORM_OIDC_BASE_URL"
      })
    const discovery = yield* client.get(`${base}/.well-known/openid-configuration`).pipe(
      Effect.flatMap(HttpClientResponse.filterStatusOk),
      Effect.flatMap(HttpClientResponse.schemaBodyJson(Discovery)),
      Effect.mapError(unreachable)
    )
    const grant = yield* grantRequest(request)
    let httpRequest = HttpClientRequest.post(discovery.token_endpoint).pipe(
      HttpClientRequest.bodyUrlParams(grant.form),
      HttpClientRequest.acceptJson
    )
    if (grant.basic !== undefined) httpRequest = HttpClientRequest.setHeader(httpRequest, "authorization", basicHeader(grant.basic))
    const response = yield* client.execute(httpRequest).pipe(Effect.mapError(unreachable))
    if (response.status !== 200) {
      const body = yield* HttpClientResponse.schemaBodyJson(OAuthErrorBody)(response).pipe(Effect.option)
      const detail = body._tag === "Some"
        ? `${body.value.error}${body.value.error_description === undefined ? "" : `: ${body.value.error_description}`}`
        : `HTTP ${response.status}`
      return yield* new TokenCliError({ message: `token request for '${request.name}' refused (${detail})` })
    }
    return yield* HttpClientResponse.schemaBodyJson(TokenResponse)(response).pipe(
      Effect.mapError((error) => new TokenCliError({ message: `unexpected token response: ${error.message}` }))
    )
  }).pipe(Effect.withSpan("DevIdp.fetchToken", { attributes: { name: request.name } }))

/** The `--list` table: every name with its kind, groups or scopes and description. */
export const listIdentities = (identities: Identities): string => {
  const rows: Array<ReadonlyArray<string>> = [["name", "kind", "groups / organizations / scopes", "description"]]
  for (const user of identities.users.values()) {
    const memberships = [...user.groups.map((g) => `/${g}`), ...user.organizations.map((o) => `org:${o}`)]
    rows.push([user.username, "user", memberships.join(" ") || "-", user.description])
  }
  for (const client of identities.clients.values()) {
    const kind = client.grants.includes("client_credentials") ? "service" : client.public ? "public client" : "client"
    rows.push([client.clientId, kind, client.scopes.join(" ") || "-", client.description])
  }
  const widths = [0, 1, 2].map((i) => Math.min(48, Math.max(...rows.map((r) => r[i]!.length))))
  return rows.map((r) => r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join("  ").trimEnd()).join("\n")
}

/** Decodes a JWT payload without verifying it (for printing). */
export const decodePayload = (token: string): unknown => {
  const part = token.split(".")[1]
  if (part === undefined) return undefined
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown
}
