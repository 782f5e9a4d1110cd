/**
 * Which failures mean "a dependency is down, try again" rather than "a bug": the kit answers the
 * first with 503 and `Retry-After` (and recovers by itself when the dependency is back), the
 * second with 500.
 *
 * A database error is an outage when the connection could not be made or was lost (refused,
 * reset, terminated, timed out, the pool gave up) or PostgreSQL says so with its SQLSTATE:
 * class 08 (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect
 * now), class 53 (insufficient resources). A constraint violation or a syntax error is not.
 */
import * as Predicate from "effect/Predicate"

const transientCodes = new Set(["57P01", "57P02", "57P03", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"])

const transientMessage =
  /connection terminated|connection refused|connect econnrefused|timeout exceeded when trying to connect|connection timeout|terminating connection|the database system is (starting up|shutting down|in recovery)|client has encountered a connection error|cannot use a pool after calling end|server closed the connection/i

const codeOf = (u: unknown): string | undefined =>
  Predicate.hasProperty(u, "code") && typeof u.code === "string" ? u.code : undefined

/** Whether `error` (or one of its causes, a few levels deep) says the database cannot be reached. */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (Predicate.isTagged(current, "DatabaseUnavailable")) return true
    const code = codeOf(current)
    if (code !== undefined && (transientCodes.has(code) || code.startsWith("08") || code.startsWith("53"))) return true
    if (current instanceof Error && transientMessage.test(current.message)) return true
    if (Predicate.hasProperty(current, "message") && typeof current.message === "string" && transientMessage.test(current.message)) {
      return true
    }
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return false
}

/** A short text for the log line. */
export const describe = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const message = Predicate.hasProperty(current, "message") && typeof current.message === "string" ? current.message : undefined
    const code = codeOf(current)
    if (message !== undefined || code !== undefined) parts.push([code, message].filter((p) => p !== undefined).join(" "))
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return parts.join(" <- ").slice(0, 300)
}
