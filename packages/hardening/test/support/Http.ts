/** Raw HTTP calls with fetch, so tests see exact statuses and bodies. */

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly text: string
  readonly headers: Headers
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly json?: unknown
  readonly body?: RequestInit["body"] | undefined
  readonly contentType?: string | undefined
  readonly timeoutMs?: number | undefined
}

export const request = async (method: string, url: string, options: Call = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body = options.body
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers["content-type"] = "application/json"
  }
  if (options.contentType !== undefined) headers["content-type"] = options.contentType
  const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text === "" ? null : JSON.parse(text)
  } catch {
    // Not JSON: the text itself.
  }
  return { status: response.status, body: parsed, text, headers: response.headers }
}

/** The `detail` of an error body, or undefined when there is none (or it is empty). */
export const detailOf = (body: unknown): string | undefined =>
  typeof body === "object" && body !== null && "detail" in body && typeof body.detail === "string" && body.detail.trim() !== ""
    ? body.detail
    : undefined
