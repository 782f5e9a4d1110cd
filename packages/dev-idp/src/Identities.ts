/**
 * The identities the development identity provider knows: users, organizations and OAuth
 * clients, read from `dev/identities.yaml`. Decoding checks the shape and the cross
 * references (unknown organizations, duplicate names), so a typo fails at start with the
 * file and the field named instead of producing a token that silently lacks a claim.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Data, Effect, ParseResult, Schema } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"

const Name = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9._-]*$/),
  Schema.annotations({ description: "lower-case letters, digits, '.', '_' and '-'" })
)
const Scope = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._:-]+$/))
const Names = <A, I>(item: Schema.Schema<A, I>) => Schema.optionalWith(Schema.Array(item), { default: () => [] })

export const Grant = Schema.Literal("client_credentials", "password", "authorization_code", "refresh_token")
export type Grant = typeof Grant.Type

export class Organization extends Schema.Class<Organization>("Organization")({
  alias: Name,
  id: Schema.UUID,
  name: Schema.NonEmptyString,
  /** Keycloak organization type attribute (`dso`, `rec`, `org`); the claim carries it as a list. */
  type: Schema.NonEmptyString,
  attributes: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }), {
    default: () => ({})
  }),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}) {}

export class User extends Schema.Class<User>("User")({
  username: Name,
  id: Schema.UUID,
  password: Schema.NonEmptyString,
  firstName: Schema.NonEmptyString.pipe(Schema.propertySignature, Schema.fromKey("first_name")),
  lastName: Schema.NonEmptyString.pipe(Schema.propertySignature, Schema.fromKey("last_name")),
  email: Schema.String.pipe(Schema.pattern(/^[^@\s]+@[^@\s]+$/)),
  /** Group paths without the leading slash (`admins`, `org/admins`). */
  groups: Names(Schema.NonEmptyString),
  realmRoles: Names(Schema.NonEmptyString).pipe(Schema.fromKey("realm_roles")),
  /** Aliases of the organizations the user is a member of, in claim order. */
  organizations: Names(Name),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}) {
  get fullName(): string {
    return `${this.firstName} ${this.lastName}`
  }
}

export class Client extends Schema.Class<Client>("Client")({
  clientId: Name.pipe(Schema.propertySignature, Schema.fromKey("client_id")),
  /** Public clients (browser apps) have no secret and cannot use client_credentials. */
  public: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  secret: Schema.optional(Schema.NonEmptyString),
  /** Id of the client's service-account user: the `sub` of its client_credentials tokens. */
  serviceAccountId: Schema.optional(Schema.UUID).pipe(Schema.fromKey("service_account_id")),
  grants: Schema.Array(Grant),
  scopes: Names(Scope),
  /** Audiences added to the realm audience in this client's access tokens. */
  audience: Names(Schema.NonEmptyString),
  /** Allowed redirect URIs for the authorization code flow; `*` matches any run of characters. */
  redirectUris: Names(Schema.NonEmptyString).pipe(Schema.fromKey("redirect_uris")),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}) {}

const IdentitiesFile = Schema.Struct({
  audience: Schema.NonEmptyString,
  defaultRealmRoles: Names(Schema.NonEmptyString).pipe(Schema.fromKey("default_realm_roles")),
  defaultClient: Name.pipe(Schema.propertySignature, Schema.fromKey("default_client")),
  organizations: Names(Organization),
  users: Names(User),
  clients: Names(Client)
})

/** The decoded, cross-checked identities. Names (usernames and client ids) share one namespace. */
export class Identities extends Data.Class<{
  readonly audience: string
  readonly defaultRealmRoles: ReadonlyArray<string>
  readonly defaultClient: Client
  readonly organizations: ReadonlyMap<string, Organization>
  readonly users: ReadonlyMap<string, User>
  readonly clients: ReadonlyMap<string, Client>
}> {
  /** The user or client called `name`, if any. */
  lookup(name: string): { readonly _tag: "User"; readonly user: User } | {
    readonly _tag: "Client"
    readonly client: Client
  } | undefined {
    const user = this.users.get(name)
    if (user !== undefined) return { _tag: "User", user }
    const client = this.clients.get(name)
    return client === undefined ? undefined : { _tag: "Client", client }
  }
}

export class IdentitiesError extends Schema.TaggedError<IdentitiesError>()("IdentitiesError", {
  source: Schema.String,
  message: Schema.String
}) {}

const check = (file: typeof IdentitiesFile.Type): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const duplicates = (what: string, values: ReadonlyArray<string>) => {
    const seen = new Set<string>()
    for (const value of values) {
      if (seen.has(value)) problems.push(`duplicate ${what} '${value}'`)
      seen.add(value)
    }
  }
  duplicates("organization alias", file.organizations.map((o) => o.alias))
  duplicates("organization id", file.organizations.map((o) => o.id))
  duplicates("name (usernames and client ids share one namespace)", [
    ...file.users.map((u) => u.username),
    ...file.clients.map((c) => c.clientId)
  ])
  duplicates("subject id", [
    ...file.users.map((u) => u.id),
    ...file.clients.flatMap((c) => (c.serviceAccountId === undefined ? [] : [c.serviceAccountId]))
  ])
  const aliases = new Set(file.organizations.map((o) => o.alias))
  for (const user of file.users) {
    for (const alias of user.organizations) {
      if (!aliases.has(alias)) problems.push(`user '${user.username}': unknown organization '${alias}'`)
    }
  }
  for (const client of file.clients) {
    const where = `client '${client.clientId}'`
    if (client.public && client.secret !== undefined) problems.push(`${where}: a public client has no secret`)
    if (!client.public && client.secret === undefined) problems.push(`${where}: a confidential client needs a secret`)
    if (client.grants.includes("client_credentials")) {
      if (client.public) problems.push(`${where}: a public client cannot use client_credentials`)
      if (client.serviceAccountId === undefined) {
        problems.push(`${where}: client_credentials needs a service_account_id (the token's sub)`)
      }
    }
    if (client.grants.includes("authorization_code") && client.redirectUris.length === 0) {
      problems.push(`${where}: authorization_code needs redirect_uris`)
    }
  }
  const defaultClient = file.clients.find((c) => c.clientId === file.defaultClient)
  if (defaultClient === undefined) problems.push(`default_client '${file.defaultClient}' is not a client`)
  else if (!defaultClient.grants.includes("password")) {
    problems.push(`default_client '${file.defaultClient}' must allow the password grant`)
  }
  return problems
}

/** Decodes and cross-checks identities from already parsed YAML/JSON. */
export const decodeIdentities = (
  input: unknown,
  source = "identities"
): Effect.Effect<Identities, IdentitiesError> =>
  Schema.decodeUnknown(IdentitiesFile, { errors: "all", onExcessProperty: "error" })(input).pipe(
    Effect.mapError((error) =>
      new IdentitiesError({ source, message: ParseResult.TreeFormatter.formatErrorSync(error) })
    ),
    Effect.flatMap((file) => {
      const problems = check(file)
      if (problems.length > 0) return Effect.fail(new IdentitiesError({ source, message: problems.join("; ") }))
      return Effect.succeed(
        new Identities({
          audience: file.audience,
          defaultRealmRoles: file.defaultRealmRoles,
          defaultClient: file.clients.find((c) => c.clientId === file.defaultClient)!,
          organizations: new Map(file.organizations.map((o) => [o.alias, o])),
          users: new Map(file.users.map((u) => [u.username, u])),
          clients: new Map(file.clients.map((c) => [c.clientId, c]))
        })
      )
    })
  )

/** Parses YAML text and decodes it. */
export const parseIdentities = (text: string, source = "identities"): Effect.Effect<Identities, IdentitiesError> =>
  Effect.try({
    try: () => YAML.parse(text) as unknown,
    catch: (error) => new IdentitiesError({ source, message: `invalid YAML: ${String(error)}` })
  }).pipe(Effect.flatMap((input) => decodeIdentities(input, source)))

/**
 * `dev/identities.yaml` of this repository, found from this module's location
 * (`packages/dev-idp/{src,dist}/Identities.*`), so it works from sources, builds and tests.
 */
export const defaultIdentitiesPath: string = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../dev/identities.yaml"
)

/** Reads and decodes an identities file. */
export const loadIdentities = (
  file: string = defaultIdentitiesPath
): Effect.Effect<Identities, IdentitiesError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => new IdentitiesError({ source: file, message: error.message }))
    )
    return yield* parseIdentities(text, file)
  }).pipe(Effect.withSpan("DevIdp.loadIdentities", { attributes: { file } }))
