/**
 * `@rec/auth`: token verification, the `Subject`, bearer middleware for `HttpApi` contracts and
 * client-credentials tokens for outbound calls. See README.md.
 */
export * as AuthConfig from "./AuthConfig.js"
export * as AuthFailure from "./AuthFailure.js"
export * as Authentication from "./Authentication.js"
export * as ClientCredentials from "./ClientCredentials.js"
export * as Discovery from "./Discovery.js"
export * as ServiceClient from "./ServiceClient.js"
export * as Subject from "./Subject.js"
export * as TokenCache from "./TokenCache.js"
export * as TokenVerifier from "./TokenVerifier.js"
