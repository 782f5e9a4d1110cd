/**
 * The few Keycloak (26+) admin endpoints organization sync needs:
 *
 * - `POST {base}/realms/{tokenRealm}/protocol/openid-connect/token` (client credentials or
 *   password grant),
 * - `GET  {base}/admin/realms/{realm}/organizations?first=&max=&briefRepresentation=false`,
 * - `GET  {base}/admin/realms/{realm}/organizations/{id}`,
 * - `POST {base}/admin/realms/{realm}/organizations`,
 * - `PUT  {base}/admin/realms/{realm}/organizations/{id}`.
 *
 * Keycloak's PUT replaces the whole organization (domains and attributes included), so an
 * update always starts from a fresh GET of the full representation and sends every field
 * back. Fields this module does not know are preserved as they came.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Clock, Context, Effect, Layer, Option, Redacted, Ref, Schema } from "effect"
import type { KeycloakSettings } from "./KeycloakSettings.js"

/** A call to Keycloak failed. Never carries a token or secret. */
export class KeycloakError extends Schema.TaggedError<KeycloakError>()("KeycloakError", {
  operation: Schema.String,
  status: Schema.optional(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation} failed${this.status === undefined ? "" : ` (HTTP ${this.status})`}: ${this.detail}`
  }
}

/** An organization as Keycloak returns it (full representation). */
export const KeycloakOrganization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  alias: Schema.optional(Schema.String),
  enabled: Schema.optional(Schema.Boolean),
  description: Schema.optional(Schema.NullOr(Schema.String)),
  redirectUrl: Schema.optional(Schema.NullOr(Schema.String)),
  attributes: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })))
})
export type KeycloakOrganization = typeof KeycloakOrganization.Type

/** What a create sends: Keycloak assigns the id. */
export interface NewOrganization {
  readonly name: string
  readonly alias: string
  readonly enabled: boolean
  readonly description?: string
  readonly attributes: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface OrganizationsAdmin {
  /** Every organization of the realm, full representations, all pages. */
  readonly list: Effect.Effect<ReadonlyArray<KeycloakOrganization>, KeycloakError>
  readonly get: (id: string) => Effect.Effect<KeycloakOrganization, KeycloakError>
  readonly create: (organization: NewOrganization) => Effect.Effect<void, KeycloakError>
  /** Replaces the organization `organization.id` with this representation. */
  readonly update: (organization: KeycloakOrganization) => Effect.Effect<void, KeycloakError>
}

export class KeycloakOrganizations extends Context.Tag("@rec/owners/KeycloakOrganizations")<
  KeycloakOrganizations,
  OrganizationsAdmin
>() {
  static layer(
    settings: KeycloakSettings,
    options?: { readonly pageSize?: number }
  ): Layer.Layer<KeycloakOrganizations, never, HttpClient.HttpClient> {
    return Layer.effect(KeycloakOrganizations, makeKeycloakOrganizations(settings, options))
  }
}

const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.optional(Schema.Number)
})

/** Renew the admin token this long before Keycloak says it expires. */
const TOKEN_MARGIN_MS = 10_000
const DEFAULT_PAGE_SIZE = 100
const REQUEST_TIMEOUT = "30 seconds"
const preserve = { onExcessProperty: "preserve" } as const

export const makeKeycloakOrganizations = (
  settings: KeycloakSettings,
  options: { readonly pageSize?: number } = {}
): Effect.Effect<OrganizationsAdmin, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
    const tokenUrl = `${settings.baseUrl}/realms/${encodeURIComponent(settings.tokenRealm)}/protocol/openid-connect/token`
    const organizationsUrl = `${settings.baseUrl}/admin/realms/${encodeURIComponent(settings.realm)}/organizations`
    const cached = yield* Ref.make(Option.none<{ token: Redacted.Redacted<string>; expiresAt: number }>())

    const requestToken = Effect.gen(function*() {
      const { credentials } = settings
      const form = credentials._tag === "ClientCredentials"
        ? {
          grant_type: "client_credentials",
          client_id: credentials.clientId,
          client_secret: Redacted.value(credentials.clientSecret)
        }
        : {
          grant_type: "password",
          client_id: credentials.clientId,
          username: credentials.username,
          password: Redacted.value(credentials.password)
        }
      const operation = `token request to realm ${settings.tokenRealm}`
      const response = yield* send(
        operation,
        HttpClientRequest.post(tokenUrl).pipe(HttpClientRequest.acceptJson, HttpClientRequest.bodyUrlParams(form))
      )
      // The body holds the token: say what is wrong with it without echoing it.
      const body = yield* decodeBody(operation, response, TokenResponse, "no access_token in the token response")
      const now = yield* Clock.currentTimeMillis
      const lifetime = (body.expires_in ?? 60) * 1000
      const entry = { token: Redacted.make(body.access_token), expiresAt: now + lifetime - TOKEN_MARGIN_MS }
      yield* Ref.set(cached, Option.some(entry))
      return entry.token
    })

    const token = Effect.gen(function*() {
      const current = yield* Ref.get(cached)
      const now = yield* Clock.currentTimeMillis
      return Option.isSome(current) && current.value.expiresAt > now ? current.value.token : yield* requestToken
    })

    const send = (operation: string, request: HttpClientRequest.HttpClientRequest) =>
      http.execute(request).pipe(
        Effect.mapError((error) => new KeycloakError({ operation, detail: error.message })),
        Effect.timeoutFail({
          duration: REQUEST_TIMEOUT,
          onTimeout: () => new KeycloakError({ operation, detail: `no response within ${REQUEST_TIMEOUT}` })
        }),
        Effect.flatMap((response) =>
          response.status >= 200 && response.status < 300
            ? Effect.succeed(response)
            : response.text.pipe(
              Effect.orElseSucceed(() => ""),
              Effect.flatMap((text) =>
                Effect.fail(new KeycloakError({ operation, status: response.status, detail: errorDetail(text) }))
              )
            )
        )
      )

    /**
     * An admin call with the current token. A 401 means Keycloak no longer accepts the token
     * (revoked, restarted, clock skew): one retry with a new token.
     */
    const admin = (operation: string, request: HttpClientRequest.HttpClientRequest) => {
      const call = (bearer: Redacted.Redacted<string>) =>
        send(operation, request.pipe(HttpClientRequest.acceptJson, HttpClientRequest.bearerToken(bearer)))
      return Effect.flatMap(token, (bearer) =>
        call(bearer).pipe(
          Effect.catchIf((error) => error.status === 401, () => Effect.flatMap(requestToken, call))
        ))
    }

    const list = Effect.gen(function*() {
      const all: Array<KeycloakOrganization> = []
      const seen = new Set<string>()
      for (let first = 0;; first += pageSize) {
        const operation = `list organizations of realm ${settings.realm}`
        const response = yield* admin(
          operation,
          HttpClientRequest.get(organizationsUrl).pipe(
            HttpClientRequest.setUrlParams({ first, max: pageSize, briefRepresentation: false })
          )
        )
        const page = yield* decodeBody(operation, response, Schema.Array(KeycloakOrganization))
        const fresh = page.filter((organization) => !seen.has(organization.id))
        for (const organization of fresh) seen.add(organization.id)
        all.push(...fresh)
        // A server that ignores `first` would repeat the first page forever.
        if (page.length < pageSize || fresh.length === 0) return all
      }
    }).pipe(Effect.withSpan("KeycloakOrganizations.list"))

    const get = (id: string) => {
      const operation = `read organization ${id}`
      return admin(operation, HttpClientRequest.get(`${organizationsUrl}/${encodeURIComponent(id)}`)).pipe(
        Effect.flatMap((response) => decodeBody(operation, response, KeycloakOrganization)),
        Effect.withSpan("KeycloakOrganizations.get", { attributes: { id } })
      )
    }

    const create = (organization: NewOrganization) =>
      admin(
        `create organization ${organization.alias}`,
        HttpClientRequest.post(organizationsUrl).pipe(HttpClientRequest.bodyUnsafeJson(organization))
      ).pipe(Effect.asVoid, Effect.withSpan("KeycloakOrganizations.create", { attributes: { alias: organization.alias } }))

    const update = (organization: KeycloakOrganization) =>
      admin(
        `update organization ${organization.alias ?? organization.id}`,
        HttpClientRequest.put(`${organizationsUrl}/${encodeURIComponent(organization.id)}`).pipe(
          HttpClientRequest.bodyUnsafeJson(organization)
        )
      ).pipe(Effect.asVoid, Effect.withSpan("KeycloakOrganizations.update", { attributes: { id: organization.id } }))

    return { list, get, create, update }
  })

const decodeBody = <A, I>(
  operation: string,
  response: HttpClientResponse.HttpClientResponse,
  schema: Schema.Schema<A, I>,
  opaqueDetail?: string
) =>
  response.json.pipe(
    Effect.flatMap((body) => Schema.decodeUnknown(schema, preserve)(body)),
    Effect.mapError((error) =>
      new KeycloakError({
        operation,
        status: response.status,
        detail: opaqueDetail ?? `unexpected response: ${error.message}`
      })
    )
  )

/** Keycloak's own error text (`errorMessage`, `error_description`, `error`), else the body. */
const errorDetail = (text: string): string => {
  try {
    const body: unknown = JSON.parse(text)
    if (typeof body === "object" && body !== null) {
      const record = body as Record<string, unknown>
      for (const key of ["errorMessage", "error_description", "error"]) {
        if (typeof record[key] === "string" && record[key] !== "") return record[key]
      }
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const trimmed = text.trim()
  if (trimmed === "") return "no details in the response"
  return trimmed.length > 200 ? `${trimmed.slice(0, 197)}...` : trimmed
}
