/**
 * When the token a client connected with expires: the `exp` claim of a JWT among its CONNECT
 * credentials, and a timer that fires then.
 */

const compactJws = /^[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+$/

/**
 * The `exp` (ms since the epoch) of `token` when it is a compact JWT with a numeric `exp`.
 * The signature is not checked here: `authenticate` verified the token before this is used, and
 * an `exp` can only end a connection earlier, never keep it longer.
 */
export const jwtExpiry = (token: string | undefined): number | undefined => {
  const payload = token === undefined ? undefined : compactJws.exec(token)?.[1]
  if (payload === undefined) return undefined
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    const exp = typeof claims === "object" && claims !== null ? (claims as { exp?: unknown }).exp : undefined
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

/** The token among CONNECT credentials, as the policy service reads them: the password, else a user name that is a JWT. */
export const credentialExpiry = (password: string | undefined, username: string | undefined): number | undefined =>
  jwtExpiry(isJwt(password) ? password : isJwt(username) ? username : undefined)

const isJwt = (value: string | undefined) => value !== undefined && compactJws.test(value)

// setTimeout's longest delay (about 24.8 days); a later expiry re-arms the timer.
const longestDelay = 2 ** 31 - 1

/** Calls `f` at `at` (ms since the epoch); the result cancels it. */
export const scheduleAt = (at: number, f: () => void): () => void => {
  let timer: ReturnType<typeof setTimeout>
  // The loop's clock may run a millisecond behind Date.now(): never call `f` early.
  const fire = () => (Date.now() < at ? arm() : f())
  const arm = () => {
    const delay = at - Date.now()
    timer = setTimeout(delay > longestDelay ? arm : fire, Math.min(longestDelay, Math.max(0, delay)))
  }
  arm()
  return () => clearTimeout(timer)
}
