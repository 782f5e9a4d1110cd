/**
 * @rec/dev-idp: a development OpenID Connect provider with the users, organizations and
 * clients of dev/identities.yaml, issuing Keycloak-shaped RS256 tokens.
 */
export { Banner } from "./Banner.js"
export * as Claims from "./Claims.js"
export { devIdpConfig } from "./Config.js"
export {
  DevIdp,
  type DevIdpOptions,
  type DevIdpService,
  DevIdpStartError,
  InvalidToken,
  make,
  MintError,
  type MintOptions
} from "./DevIdp.js"
export {
  Client,
  decodeIdentities,
  defaultIdentitiesPath,
  Grant,
  Identities,
  IdentitiesError,
  loadIdentities,
  Organization,
  parseIdentities,
  User
} from "./Identities.js"
export { endpoints } from "./Provider.js"
export { decodePayload, fetchToken, grantRequest, listIdentities, TokenCliError, type TokenRequest, TokenResponse } from "./TokenCli.js"
