/**
 * The one error body of the platform, `{detail, issues?}` (`HttpErrors`), for the answers the kit
 * writes itself (unknown route, unreadable body, defect) and for the decode failures of
 * `HttpApiBuilder`, whose own body (`{_tag: "HttpApiDecodeError", message: <tree>, issues}`) is
 * rewritten here on its way out:
 *
 * - `detail` says in one sentence what is wrong and where (`Invalid request: quantity: Expected
 *   a positive number, actual -1`), at most a few hundred characters;
 * - `issues` keeps one entry per problem from `ParseResult.ArrayFormatter` (path and message),
 *   with messages that echo a huge value or a whole type shortened.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { ErrorBody, Issue } from "./HttpErrors.js"

export interface KitError {
  readonly status: number
  readonly detail: string
  readonly issues?: ReadonlyArray<Issue> | undefined
}

export const body = (error: Omit<KitError, "status">): ErrorBody =>
  error.issues === undefined || error.issues.length === 0
    ? { detail: error.detail }
    : { detail: error.detail, issues: error.issues }

export const response = (error: KitError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body(error), { status: error.status })

/** `facts.cur`, `items[2].name`; `""` for the top. */
export const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((text, key) =>
    typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`, "")

const maxMessage = 240
const maxExpected = 100
const maxDetail = 600

const shorten = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * A formatter message as a person reads it: `Expected { readonly a: string; ... }, actual null`
 * names the shape instead of dumping it, and long expectations or echoed values are cut.
 */
export const readableMessage = (message: string): string => {
  const match = /^Expected ([\s\S]*?), actual ([\s\S]*)$/.exec(message)
  if (match === null) return shorten(message, maxMessage)
  const [, expected, actual] = match
  const wanted = expected.startsWith("{") ? "an object" : expected.startsWith("ReadonlyArray<") ? "an array" : shorten(expected, maxExpected)
  return shorten(`Expected ${wanted}, actual ${actual}`, maxMessage)
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const pathOf = (u: unknown): Array<string | number> =>
  Array.isArray(u) ? u.filter((k): k is string | number => typeof k === "string" || typeof k === "number") : []

/** The sentence for a list of problems. */
export const invalidRequest = (issues: ReadonlyArray<Issue>): string => {
  if (issues.length === 0) return "Invalid request: it does not match what this endpoint accepts"
  const parts = issues.map((issue) => {
    const where = pathText(issue.path)
    return where === "" ? issue.message : `${where}: ${issue.message}`
  })
  const head = issues.length === 1 ? "Invalid request: " : `Invalid request (${issues.length} problems): `
  let text = head
  for (let i = 0; i < parts.length; i++) {
    const next = (i === 0 ? "" : "; ") + parts[i]
    if (text.length + next.length > maxDetail) {
      text += `; and ${parts.length - i} more (see issues)`
      break
    }
    text += next
  }
  return text
}

const expectation = /^Expected ([\s\S]*), actual ([\s\S]*)$/

/**
 * One issue per problem: a union reports each member's failure (`Expected "a", actual "x"`,
 * `Expected "b", actual "x"`, ...), and a payload offered in two encodings reports everything
 * twice; the first become one `Expected "a" | "b", actual "x"`, the second one entry.
 */
export const mergeIssues = (issues: ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly message: string }>) => {
  const merged: Array<{ path: ReadonlyArray<string | number>; message: string; expected?: Array<string>; actual?: string }> = []
  const seen = new Set<string>()
  for (const issue of issues) {
    const key = JSON.stringify([issue.path, issue.message])
    if (seen.has(key)) continue
    seen.add(key)
    const match = expectation.exec(issue.message)
    const pathKey = JSON.stringify(issue.path)
    const previous = merged.find((m) => m.actual !== undefined && JSON.stringify(m.path) === pathKey)
    if (match !== null && previous !== undefined && previous.actual === match[2]) {
      previous.expected!.push(match[1])
      previous.message = `Expected ${previous.expected!.join(" | ")}, actual ${match[2]}`
      continue
    }
    merged.push(match === null
      ? { path: issue.path, message: issue.message }
      : { path: issue.path, message: issue.message, expected: [match[1]], actual: match[2] })
  }
  return merged.map(({ message, path }) => ({ path, message }))
}

/** `HttpApiDecodeError`'s encoded body as the platform's. */
export const fromDecodeError = (encoded: Record<string, unknown>): ErrorBody => {
  const raw = Array.isArray(encoded.issues)
    ? encoded.issues.flatMap((u) => (isRecord(u) && typeof u.message === "string" ? [{ path: pathOf(u.path), message: u.message }] : []))
    : []
  const issues = mergeIssues(raw).map(({ message, path }) => ({ path, message: readableMessage(message) }))
  return body({ detail: invalidRequest(issues), issues })
}

const decoder = new TextDecoder()

/**
 * Rewrites a decode failure's body (only error responses with an in-memory JSON body are
 * looked at, so successful responses cost nothing).
 */
export const rewrite = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status !== 400) return response
  const body = response.body
  if (body._tag !== "Uint8Array" || !body.contentType.includes("json")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(body.body))
  } catch {
    return response
  }
  if (!isRecord(parsed) || parsed._tag !== "HttpApiDecodeError") return response
  return HttpServerResponse.setBody(response, HttpBody.unsafeJson(fromDecodeError(parsed)))
}
