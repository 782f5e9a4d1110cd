/**
 * A local HTTP server implementing the Keycloak endpoints organization sync uses, with
 * Keycloak's semantics where they matter: the token endpoint's grants and errors, bearer
 * checks, paged listing that leaves attributes out unless `briefRepresentation=false`,
 * name/alias conflicts (409), and a PUT that replaces the whole organization (a missing
 * `domains` or `attributes` clears them).
 */
import { Effect, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface StoredOrganization {
  id: string
  name: string
  alias: string
  enabled: boolean
  description?: string
  redirectUrl?: string
  attributes: Record<string, Array<string>>
  domains: Array<{ name: string; verified: boolean }>
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly form?: URLSearchParams
  readonly json?: unknown
}

export interface FakeKeycloakOptions {
  /** The realm whose organizations are served. */
  readonly realm: string
  /** Clients allowed the client-credentials grant in `realm`. */
  readonly clients?: Readonly<Record<string, string>>
  /** Users allowed the password grant (client `admin-cli`) in `master`. */
  readonly users?: Readonly<Record<string, string>>
  readonly tokenLifetimeSeconds?: number
}

export interface FakeKeycloak {
  readonly url: string
  readonly organizations: Map<string, StoredOrganization>
  readonly requests: Array<RecordedRequest>
  /** Aliases whose creation fails with a 500. */
  readonly failCreate: Set<string>
  /** Forgets every issued token, as a restart or an expiry would. */
  readonly revokeTokens: () => void
  readonly seed: (organization: Omit<StoredOrganization, "id">) => StoredOrganization
  /** Requests that change state. */
  readonly writes: () => Array<RecordedRequest>
}

export const startFakeKeycloak = (options: FakeKeycloakOptions): Effect.Effect<FakeKeycloak, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; fake: FakeKeycloak }>((resume) => {
      const organizations = new Map<string, StoredOrganization>()
      const requests: Array<RecordedRequest> = []
      const failCreate = new Set<string>()
      const tokens = new Set<string>()
      const orgsPath = `/admin/realms/${options.realm}/organizations`

      const send = (res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers })
        res.end(body === undefined ? undefined : JSON.stringify(body))
      }

      const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
        const url = new URL(req.url ?? "/", "http://localhost")
        const method = req.method ?? "GET"
        const contentType = req.headers["content-type"] ?? ""
        const form = contentType.startsWith("application/x-www-form-urlencoded") ? new URLSearchParams(raw) : undefined
        const json = contentType.startsWith("application/json") && raw !== "" ? JSON.parse(raw) as unknown : undefined
        requests.push({ method, path: url.pathname, query: url.searchParams, ...(form ? { form } : {}), ...(json === undefined ? {} : { json }) })

        const tokenMatch = /^\/realms\/([^/]+)\/protocol\/openid-connect\/token$/.exec(url.pathname)
        if (tokenMatch && method === "POST") {
          const realm = decodeURIComponent(tokenMatch[1]!)
          const grant = form?.get("grant_type")
          const ok = grant === "client_credentials"
            ? realm === options.realm && options.clients?.[form?.get("client_id") ?? ""] === form?.get("client_secret")
            : grant === "password"
            ? realm === "master" && form?.get("client_id") === "admin-cli" &&
              options.users?.[form?.get("username") ?? ""] === form?.get("password")
            : false
          if (!ok) {
            return send(res, 401, {
              error: "unauthorized_client",
              error_description: "Invalid client or Invalid client credentials"
            })
          }
          const token = randomUUID()
          tokens.add(token)
          return send(res, 200, { access_token: token, expires_in: options.tokenLifetimeSeconds ?? 300, token_type: "Bearer" })
        }

        if (!url.pathname.startsWith(orgsPath)) return send(res, 404, { error: "Unable to find matching target resource method" })
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
        if (bearer === undefined || !tokens.has(bearer)) return send(res, 401, { error: "HTTP 401 Unauthorized" })

        const rest = url.pathname.slice(orgsPath.length)
        if (rest === "" && method === "GET") {
          const first = Number(url.searchParams.get("first") ?? 0)
          const max = Number(url.searchParams.get("max") ?? 10)
          const brief = url.searchParams.get("briefRepresentation") !== "false"
          const page = [...organizations.values()]
            .sort((a, b) => a.name.localeCompare(b.name))
            .slice(first, first + max)
            .map((organization) => {
              if (!brief) return organization
              const { attributes: _attributes, ...briefRepresentation } = organization
              return briefRepresentation
            })
          return send(res, 200, page)
        }
        if (rest === "" && method === "POST") {
          const body = json as Partial<StoredOrganization>
          if (typeof body.name !== "string" || body.name === "") return send(res, 400, { errorMessage: "Name can not be null" })
          const alias = body.alias ?? body.name
          if ([...organizations.values()].some((o) => o.name === body.name)) {
            return send(res, 409, { errorMessage: "A organization with the same name already exists." })
          }
          if ([...organizations.values()].some((o) => o.alias === alias)) {
            return send(res, 409, { errorMessage: "A organization with the same alias already exists" })
          }
          if (failCreate.has(alias)) return send(res, 500, { errorMessage: "simulated storage failure" })
          const created = store({ ...body, name: body.name, alias })
          return send(res, 201, undefined, { location: `${url.origin}${orgsPath}/${created.id}` })
        }
        const idMatch = /^\/([^/]+)$/.exec(rest)
        const existing = idMatch ? organizations.get(decodeURIComponent(idMatch[1]!)) : undefined
        if (existing === undefined) return send(res, 404, { errorMessage: "Organization not found." })
        if (method === "GET") return send(res, 200, existing)
        if (method === "PUT") {
          const body = json as Partial<StoredOrganization>
          if (body.alias !== undefined && body.alias !== existing.alias) {
            return send(res, 400, { errorMessage: "Cannot change the alias" })
          }
          organizations.set(existing.id, whole(existing.id, { ...body, name: body.name ?? existing.name, alias: existing.alias }))
          return send(res, 204)
        }
        return send(res, 405, { error: "Method not allowed" })
      }

      type Fields = Omit<Partial<StoredOrganization>, "id"> & { name: string; alias: string }

      /** The organization as a create or a PUT leaves it: what the body leaves out is reset. */
      const whole = (id: string, organization: Fields): StoredOrganization => ({
        id,
        name: organization.name,
        alias: organization.alias,
        enabled: organization.enabled ?? true,
        ...(organization.description == null ? {} : { description: organization.description }),
        ...(organization.redirectUrl == null ? {} : { redirectUrl: organization.redirectUrl }),
        attributes: organization.attributes ?? {},
        domains: organization.domains ?? []
      })

      const store = (organization: Fields) => {
        const stored = whole(randomUUID(), organization)
        organizations.set(stored.id, stored)
        return stored
      }

      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          try {
            handle(req, res, Buffer.concat(chunks).toString("utf8"))
          } catch (error) {
            send(res, 500, { error: String(error) })
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          server,
          fake: {
            url: `http://127.0.0.1:${port}`,
            organizations,
            requests,
            failCreate,
            revokeTokens: () => tokens.clear(),
            seed: store,
            writes: () =>
              requests.filter((request) =>
                (request.method === "POST" && !request.path.includes("/protocol/")) || request.method === "PUT"
              )
          }
        }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  ).pipe(Effect.map(({ fake }) => fake))
