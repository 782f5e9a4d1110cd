/**
 * Searches log lines for what must never be in them: the tokens a test used (whole, or their
 * signature, which is what makes a token usable), the secrets the services were given, an
 * `Authorization` header value, anything shaped like a signed JWT.
 */

export interface Secret {
  readonly name: string
  readonly value: string
}

export interface Leak {
  readonly secret: string
  readonly line: string
}

/** A JWS compact serialization (`eyJ...` header, payload and signature). */
const jwtShape = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/
const bearer = /Bearer\s+\S{8,}/i

/** The secrets to search for a token: the token and its signature segment. */
export const tokenSecrets = (name: string, token: string): ReadonlyArray<Secret> => {
  const signature = token.split(".")[2] ?? ""
  return [{ name, value: token }, ...(signature.length >= 16 ? [{ name: `${name} (signature)`, value: signature }] : [])]
}

export const findLeaks = (lines: ReadonlyArray<string>, secrets: ReadonlyArray<Secret>): ReadonlyArray<Leak> => {
  const leaks: Array<Leak> = []
  for (const line of lines) {
    for (const secret of secrets) {
      if (secret.value !== "" && line.includes(secret.value)) leaks.push({ secret: secret.name, line: line.slice(0, 400) })
    }
    if (bearer.test(line)) leaks.push({ secret: "a Bearer credential", line: line.slice(0, 400) })
    if (jwtShape.test(line)) leaks.push({ secret: "a signed JWT", line: line.slice(0, 400) })
  }
  return leaks
}
