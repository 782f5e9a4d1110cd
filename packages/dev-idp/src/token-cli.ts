/**
 * `dev-token`: prints an access token for a user or client of dev/identities.yaml, fetched
 * from a running dev identity provider (`PLATFORM_OIDC_BASE_URL`, default
 * http://localhost:8080).
 *
 *   dev-token admin                      # password grant through the default client
 *   dev-token participant --client rec-frontend --scope "openid dt.read"
 *   dev-token svc-grid --scope dt.read   # client_credentials
 *   dev-token admin --claims             # the decoded claims instead of the token
 *   dev-token --list                     # every identity
 *
 *   curl -H "Authorization: Bearer $(dev-token dso-operator)" http://localhost:8015/api/me
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Option } from "effect"
import { parseArgs } from "node:util"
import { loadIdentities } from "./Identities.js"
import { decodePayload, fetchToken, listIdentities, TokenCliError } from "./TokenCli.js"

const usage = `usage: dev-token <name> [--client <client-id>] [--scope "<scopes>"] [--claims | --id-token]
       dev-token --list
env:   PLATFORM_OIDC_BASE_URL (default http://localhost:8080), DEV_IDP_IDENTITIES`

const program = Effect.gen(function*() {
  const { positionals, values } = yield* Effect.try({
    try: () =>
      parseArgs({
        allowPositionals: true,
        options: {
          list: { type: "boolean", short: "l" },
          client: { type: "string", short: "c" },
          scope: { type: "string", short: "s" },
          claims: { type: "boolean" },
          "id-token": { type: "boolean" },
          help: { type: "boolean", short: "h" }
        }
      }),
    catch: (error) => new TokenCliError({ message: `${error instanceof Error ? error.message : String(error)}\n${usage}` })
  })
  if (values.help === true) return yield* Console.log(usage)
  const file = yield* Config.option(Config.nonEmptyString("DEV_IDP_IDENTITIES"))
  const identities = yield* loadIdentities(Option.getOrUndefined(file))
  if (values.list === true) return yield* Console.log(listIdentities(identities))
  const name = positionals[0]
  if (name === undefined || positionals.length > 1) return yield* new TokenCliError({ message: usage })
  const baseUrl = yield* Config.string("PLATFORM_OIDC_BASE_URL").pipe(Config.withDefault("http://localhost:8080"))
  const token = yield* fetchToken({ baseUrl, identities, name, client: values.client, scope: values.scope })
  if (values["id-token"] === true) {
    if (token.id_token === undefined) return yield* new TokenCliError({ message: "no id token: add openid to --scope" })
    return yield* Console.log(token.id_token)
  }
  if (values.claims === true) return yield* Console.log(JSON.stringify(decodePayload(token.access_token), null, 2))
  yield* Console.log(token.access_token)
})

program.pipe(
  Effect.catchAll((error) =>
    Effect.zipRight(
      Console.error(`dev-token: ${"message" in error ? error.message : String(error)}`),
      Effect.sync(() => {
        process.exitCode = 1
      })
    )
  ),
  Effect.provide([FetchHttpClient.layer, NodeContext.layer]),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
