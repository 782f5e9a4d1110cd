/**
 * What the dev identity provider prints when it starts: the issuer URL (the value services
 * need in PLATFORM_OIDC_BASE_URL) and the names tokens can be asked for. Credentials are not
 * printed; they are in dev/identities.yaml, and `dev-token <name>` uses them for you.
 */
import { Effect, Layer } from "effect"
import { DevIdp } from "./DevIdp.js"

export const Banner: Layer.Layer<never, never, DevIdp> = Layer.effectDiscard(
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const users = [...idp.identities.users.keys()].join(", ")
    const services = [...idp.identities.clients.values()]
      .filter((c) => c.grants.includes("client_credentials"))
      .map((c) => c.clientId)
      .join(", ")
    yield* Effect.logInfo(`dev identity provider (development only) issuer ${idp.issuer}`).pipe(
      Effect.annotateLogs({ discovery: idp.discoveryUrl, jwks: idp.jwksUri, token: idp.tokenEndpoint })
    )
    yield* Effect.logInfo(
      idp.host === "0.0.0.0" || idp.host === "::"
        ? `listening on every interface (${idp.host}:${idp.port}): anyone who reaches it can mint admin tokens`
        : `listening on ${idp.host}:${idp.port} only (HOST=0.0.0.0 for every interface)`
    )
    yield* Effect.logInfo(`users: ${users}`)
    yield* Effect.logInfo(`service clients: ${services}`)
    yield* Effect.logInfo(
      `a token by hand: PLATFORM_OIDC_BASE_URL=${idp.issuer} pnpm --filter @rec/dev-idp exec dev-token <name>`
    )
  })
)
