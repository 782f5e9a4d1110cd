/**
 * The launcher's bind address (`HOST`, default 127.0.0.1) as the different readers need it: people
 * and issuer URLs, MQTT clients, and the components calling each other.
 */

/** Every interface: `0.0.0.0` (IPv4) or `::` (IPv6, usually dual-stack). */
export const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::"

/** The loopback interface only. */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)

const bracketed = (host: string) => (host.includes(":") ? `[${host}]` : host)

/**
 * The host in URLs for people and in the dev identity provider's issuer: `localhost` when the
 * platform is reachable there (loopback or every interface), else the address itself.
 */
export const forPeople = (host: string): string => (isWildcard(host) || isLoopback(host) ? "localhost" : bracketed(host))

/**
 * The host to connect to from this machine: the address itself, or 127.0.0.1 for a wildcard. Used
 * for MQTT URLs too, where many clients do not fall back from `localhost`'s `::1` to 127.0.0.1.
 */
export const forConnecting = (host: string): string => (isWildcard(host) ? "127.0.0.1" : bracketed(host))
