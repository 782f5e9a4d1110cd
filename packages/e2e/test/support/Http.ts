/** Plain HTTP calls of the tests (the platform's public surface, as a browser or script uses it). */

export interface Answer<B = unknown> {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The JSON body, or `undefined` when it is not JSON. */
  readonly body: B
}

export interface CallOptions {
  readonly token?: string
  readonly json?: unknown
  readonly body?: RequestInit["body"]
  readonly headers?: Record<string, string>
  readonly timeoutMs?: number
}

export const call = async <B = unknown>(method: string, url: string, options: CallOptions = {}): Promise<Answer<B>> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  let body = options.body
  if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  }
  const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed as B }
}

/** `call`, failing with the answer when the status is not the expected one. */
export const expectStatus = async <B = unknown>(status: number, method: string, url: string, options: CallOptions = {}): Promise<B> => {
  const answer = await call<B>(method, url, options)
  if (answer.status !== status) throw new Error(`${method} ${url}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`)
  return answer.body
}

/** An access token of a dev identity provider user (password grant of the `rec-cli` client). */
export const userToken = async (issuer: string, username: string): Promise<string> => {
  const form = new URLSearchParams({
    grant_type: "password",
    client_id: "rec-cli",
    client_secret: "dev-only-secret-rec-cli",
    username,
    password: username
  })
  const answer = await call<{ access_token: string }>("POST", `${issuer}/protocol/openid-connect/token`, {
    body: form,
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })
  if (answer.status !== 200) throw new Error(`no token for ${username}: ${answer.status} ${answer.text}`)
  return answer.body.access_token
}

/** The `sub` of an access token (read, not verified: the services verify it). */
export const subjectOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { sub: string }).sub
