/**
 * Contract fuzzing: requests generated from a service's `HttpApi` contract and its Effect Schemas
 * (`Arbitrary` with fast-check), valid and mutated, sent over real HTTP to the running service.
 * Whatever arrives, the service must answer without a 5xx, stay up, and say what is wrong in
 * every 4xx body (`detail`, or `reason` for bodies another protocol fixes).
 *
 * Per endpoint, per run (a seeded fast-check sample, so a failure can be replayed):
 *
 * - **valid**: path, query and body drawn from the contract's schemas and encoded as a client
 *   would (then the service may still answer 4xx for state reasons: unknown ids, conflicts);
 * - **mutated**: one field removed, one field of the wrong type, a 100 KB string, nesting past
 *   the kit's limit, `null`/an array/a string as the body, invalid UTF-8, the wrong content type,
 *   path traversal in path parameters (`../`, `%2e%2e%2f`, `..%2f`), absurd query values
 *   (`-1`, `1e309`, `NaN`, 10,000 characters, arrays where one value is expected), invalid UTF-8
 *   (`%FF`) in path parameters and query values, CR/LF in path parameters, no body at all, a
 *   multipart body where JSON is expected, and with `maxBodyBytes` a body one byte over it.
 *
 * `report.byKind` counts the answers per mutation kind and status (`{"wrong type": {"400": 12}}`),
 * so a run shows what each kind of bad input got.
 *
 * ```ts
 * const report = await ContractFuzz.run(Api, { baseUrl, token, runs: 20, seed: 42 })
 * expect(report.findings).toEqual([])
 * ```
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import { reflect } from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Arbitrary from "effect/Arbitrary"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

export interface Options {
  readonly baseUrl: string
  /** A token for endpoints behind security middleware (without one they are probed anonymously). */
  readonly token?: string | undefined
  /** Header the token goes in (default `authorization` as `Bearer <token>`). */
  readonly tokenHeader?: string | undefined
  /** Samples per endpoint, each sent valid and with every mutation (default 10). */
  readonly runs?: number | undefined
  readonly seed?: number | undefined
  /** Endpoints left out, as `"POST /path/:id"` (streaming or multipart endpoints). */
  readonly skip?: ReadonlyArray<string> | undefined
  /** Prefix of every path (`/api` when the contract's paths omit it). */
  readonly pathPrefix?: string | undefined
  /** Extra headers on every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Where the liveness probe is (default `/health`). */
  readonly healthPath?: string | undefined
  /**
   * Which endpoints get the token: `secured` (default) those behind a security middleware of the
   * contract, `every` all of them (services that authenticate in their handlers or a router
   * middleware the contract does not declare).
   */
  readonly tokenOn?: "secured" | "every" | undefined
  /** The service's body limit: when given, a JSON body one byte over it is sent too (a 413 expected). */
  readonly maxBodyBytes?: number | undefined
}

export interface Finding {
  readonly endpoint: string
  readonly case: string
  readonly status: number
  readonly problem: string
  readonly request: string
}

export interface Report {
  readonly requests: number
  readonly endpoints: number
  /** Answers by status class (`2xx`, `4xx`, ...). */
  readonly statuses: Readonly<Record<string, number>>
  readonly findings: ReadonlyArray<Finding>
  /** Answers per mutation kind (`valid`, `wrong type`, `path traversal`, ...) and exact status. */
  readonly byKind: Readonly<Record<string, Readonly<Record<string, number>>>>
}

interface Case {
  readonly name: string
  /** The mutation kind, for the report (`valid`, `wrong type`, `path traversal`, ...). */
  readonly kind: string
  readonly path: string
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly body?: { readonly bytes: Uint8Array | string; readonly contentType: string } | undefined
  /** Appended to the query string as it is (not encoded again). */
  readonly rawQuery?: string | undefined
}

const encoder = new TextEncoder()

/** A value for a schema's encoded side: a sample, or `undefined` when none can be drawn. */
const sampler = (schema: Schema.Schema.Any | undefined, seed: number) => {
  if (schema === undefined) return undefined
  let arbitrary: FastCheck.Arbitrary<unknown>
  try {
    arbitrary = Arbitrary.make(schema as Schema.Schema<unknown>)
  } catch {
    return undefined
  }
  const encode = Schema.encodeUnknownOption(schema as Schema.Schema<unknown, unknown>)
  return (run: number): unknown => {
    try {
      const [value] = FastCheck.sample(arbitrary, { seed: seed + run, numRuns: 1 })
      return Option.getOrUndefined(encode(value))
    } catch {
      return undefined
    }
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Mutations of an encoded JSON body. */
const bodyMutations = (value: unknown): ReadonlyArray<readonly [string, unknown, string]> => {
  const out: Array<readonly [string, unknown, string]> = [
    ["body null", null, "wrong body shape"],
    ["body array", [value], "wrong body shape"],
    ["body string", "x", "wrong body shape"],
    ["body huge string", "x".repeat(100_000), "huge string"],
    ["body nested past the limit", JSON.parse("[".repeat(200) + "]".repeat(200)), "deep nesting"]
  ]
  if (isRecord(value)) {
    const keys = Object.keys(value)
    for (const key of keys.slice(0, 4)) {
      const { [key]: _, ...without } = value
      out.push([`without ${key}`, without, "missing field"])
      const current = value[key]
      const wrong = typeof current === "string" ? 12345 : typeof current === "number" ? "not a number" : typeof current === "boolean" ? "yes" : 7
      out.push([`${key} wrong type`, { ...value, [key]: wrong }, "wrong type"])
      out.push([`${key} huge`, { ...value, [key]: "y".repeat(100_000) }, "huge string"])
      out.push([`${key} deep`, { ...value, [key]: JSON.parse("[".repeat(100) + "]".repeat(100)) }, "deep nesting"])
    }
    out.push(["unknown field", { ...value, unexpected_field: { nested: true } }, "unknown field"])
  }
  return out
}

const traversals = ["../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2f", "..\\..\\windows", "a/../../b", "%00", "x".repeat(5000)]
/** Path or query values sent as they are (not percent-encoded again): invalid UTF-8, CR/LF. */
const rawPathValues: ReadonlyArray<readonly [string, string]> = [
  ["invalid UTF-8", "%FF%FE%80"],
  ["CR/LF", "x%0D%0ASet-Cookie:%20a=b"]
]
/** A JSON body of `bytes` bytes. */
const bodyOfSize = (bytes: number) => `{"padding":"${"z".repeat(Math.max(0, bytes - 14))}"}`
const absurd = ["-1", "1e309", "NaN", "99999999999999999999999", "", "z".repeat(10_000), "<script>", "' OR 1=1 --"]

const fill = (template: string, params: Readonly<Record<string, string>>, raw: ReadonlySet<string> = new Set()): string =>
  template.replace(/:(\w+)\??/g, (_, name: string) => (raw.has(name) ? params[name] ?? "x" : encodeURIComponent(params[name] ?? "x")))

/** The cases of one endpoint for one sample. */
const casesOf = (
  endpoint: HttpApiEndpoint,
  draw: { path?: unknown; query?: unknown; payload?: unknown },
  prefix: string,
  maxBodyBytes?: number
): ReadonlyArray<Case> => {
  const params: Record<string, string> = {}
  if (isRecord(draw.path)) for (const [k, v] of Object.entries(draw.path)) params[k] = String(v)
  const path = prefix + fill(endpoint.path, params)
  const query: Array<readonly [string, string]> = []
  if (isRecord(draw.query)) {
    for (const [k, v] of Object.entries(draw.query)) {
      if (Array.isArray(v)) for (const item of v) query.push([k, String(item)])
      else if (v !== undefined) query.push([k, String(v)])
    }
  }
  const cases: Array<Case> = []
  const json = (name: string, value: unknown, kind: string): Case => ({
    name,
    kind,
    path,
    query,
    body: { bytes: JSON.stringify(value) ?? "null", contentType: "application/json" }
  })
  const hasBody = endpoint.method !== "GET" && endpoint.method !== "DELETE" && endpoint.method !== "HEAD"
  if (hasBody && endpoint.payloadIsJson) {
    const payload = draw.payload
    cases.push(json("valid", payload, "valid"))
    for (const [name, value, kind] of bodyMutations(payload)) cases.push(json(name, value, kind))
    const text = JSON.stringify(payload) ?? "null"
    if (text.startsWith("{") && text.length > 2) {
      cases.push({ name: "__proto__ key", kind: "__proto__ key", path, query, body: { bytes: `{"__proto__":{"polluted":true},${text.slice(1)}`, contentType: "application/json" } })
    }
    cases.push({ name: "invalid UTF-8", kind: "invalid UTF-8", path, query, body: { bytes: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), contentType: "application/json" } })
    cases.push({ name: "not JSON", kind: "not JSON", path, query, body: { bytes: "{\"a\":", contentType: "application/json" } })
    cases.push({ name: "wrong content type", kind: "wrong content type", path, query, body: { bytes: JSON.stringify(payload) ?? "", contentType: "text/plain" } })
    cases.push({ name: "form instead of JSON", kind: "wrong content type", path, query, body: { bytes: "a=1&b=%ff", contentType: "application/x-www-form-urlencoded" } })
    cases.push({
      name: "multipart instead of JSON",
      kind: "wrong content type",
      path,
      query,
      body: { bytes: "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n", contentType: "multipart/form-data; boundary=b" }
    })
    cases.push({ name: "no body", kind: "missing body", path, query })
    if (maxBodyBytes !== undefined) {
      cases.push({ name: "body over the size limit", kind: "oversized body", path, query, body: { bytes: bodyOfSize(maxBodyBytes + 1), contentType: "application/json" } })
    }
  } else {
    cases.push({ name: "valid", kind: "valid", path, query })
  }
  const names = endpoint.pathParams
  for (const name of names.slice(0, 2)) {
    for (const bad of traversals) {
      cases.push({ name: `path ${name} ${bad.slice(0, 20)}`, kind: bad.length > 100 ? "huge string" : "path traversal", path: prefix + fill(endpoint.path, { ...params, [name]: bad }), query })
    }
    for (const [kind, bad] of rawPathValues) {
      cases.push({ name: `path ${name} ${kind}`, kind, path: prefix + fill(endpoint.path, { ...params, [name]: bad }, new Set([name])), query })
    }
  }
  for (const name of endpoint.queryParams.slice(0, 3)) {
    for (const bad of absurd) {
      cases.push({ name: `query ${name}=${bad.slice(0, 20)}`, kind: "absurd query", path, query: [...query.filter(([k]) => k !== name), [name, bad]] })
    }
    cases.push({ name: `query ${name} repeated`, kind: "absurd query", path, query: [...query, [name, "a"], [name, "b"]] })
    cases.push({ name: `query ${name} invalid UTF-8`, kind: "invalid UTF-8", path, query: query.filter(([k]) => k !== name), rawQuery: `${encodeURIComponent(name)}=%FF%FE` })
  }
  return cases
}

interface HttpApiEndpoint {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly secured: boolean
  readonly payloadIsJson: boolean
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly schemas: {
    readonly path?: Schema.Schema.Any | undefined
    readonly query?: Schema.Schema.Any | undefined
    readonly payload?: Schema.Schema.Any | undefined
  }
}

const propertyNames = (schema: Schema.Schema.Any | undefined): ReadonlyArray<string> => {
  if (schema === undefined) return []
  const ast = AST.encodedAST(schema.ast)
  try {
    return AST.getPropertySignatures(ast).map((p) => String(p.name))
  } catch {
    return []
  }
}

/** The endpoints of a contract, as the fuzzer sees them. */
export const endpointsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyArray<HttpApiEndpoint> => {
  const out: Array<HttpApiEndpoint> = []
  reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, middleware, payloads }) => {
      const jsonPayload = payloads.get("application/json")
      const pathSchema = Option.getOrUndefined(endpoint.pathSchema) as Schema.Schema.Any | undefined
      const querySchema = Option.getOrUndefined(endpoint.urlParamsSchema) as Schema.Schema.Any | undefined
      out.push({
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        secured: [...middleware].some((m) => HttpApiMiddleware.isSecurity(m)),
        payloadIsJson: jsonPayload !== undefined && !HttpApiSchema.getMultipart(jsonPayload.ast),
        pathParams: [...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
        queryParams: propertyNames(querySchema),
        schemas: {
          path: pathSchema,
          query: querySchema,
          payload: jsonPayload === undefined ? undefined : (Schema.make(jsonPayload.ast) as Schema.Schema.Any)
        }
      })
    }
  })
  return out
}

const detailOf = (text: string): string | undefined => {
  try {
    const body = JSON.parse(text) as unknown
    if (isRecord(body)) {
      if (typeof body.detail === "string" && body.detail.trim() !== "") return body.detail
      if (typeof body.reason === "string" && body.reason.trim() !== "") return body.reason
    }
  } catch {
    // not JSON
  }
  return undefined
}

export const run = async <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  options: Options
): Promise<Report> => {
  const runs = options.runs ?? 10
  const seed = options.seed ?? 1
  const skip = new Set(options.skip ?? [])
  const prefix = options.pathPrefix ?? ""
  const findings: Array<Finding> = []
  const statuses: Record<string, number> = {}
  const byKind: Record<string, Record<string, number>> = {}
  let requests = 0
  const endpoints = endpointsOf(api).filter((e) => !skip.has(`${e.method} ${e.path}`))

  for (const endpoint of endpoints) {
    const paths = sampler(endpoint.schemas.path, seed)
    const queries = sampler(endpoint.schemas.query, seed + 1_000)
    const payloads = sampler(endpoint.schemas.payload, seed + 2_000)
    for (let i = 0; i < runs; i++) {
      const draw = { path: paths?.(i), query: queries?.(i), payload: payloads?.(i) ?? {} }
      // Mutations do not depend on the sample beyond its shape: all of them on the first run only.
      const cases = casesOf(endpoint, draw, prefix, options.maxBodyBytes).filter((c) => i === 0 || c.name === "valid")
      for (const c of cases) {
        const url = new URL(c.path, options.baseUrl)
        for (const [k, v] of c.query) url.searchParams.append(k, v)
        if (c.rawQuery !== undefined) url.search = url.search === "" ? `?${c.rawQuery}` : `${url.search}&${c.rawQuery}`
        const headers: Record<string, string> = { ...options.headers }
        if ((endpoint.secured || options.tokenOn === "every") && options.token !== undefined) {
          const header = options.tokenHeader ?? "authorization"
          headers[header] = header === "authorization" ? `Bearer ${options.token}` : options.token
        }
        if (c.body !== undefined) headers["content-type"] = c.body.contentType
        const label = `${endpoint.method} ${endpoint.path}`
        let status = 0
        let text = ""
        try {
          requests++
          const response = await fetch(url, {
            method: endpoint.method,
            headers,
            body: c.body === undefined ? undefined : typeof c.body.bytes === "string" ? encoder.encode(c.body.bytes) : c.body.bytes,
            // A redirect is an answer of its own (following it would test another server).
            redirect: "manual",
            signal: AbortSignal.timeout(15_000)
          })
          status = response.status
          text = await response.text()
        } catch (error) {
          findings.push({ endpoint: label, case: c.name, status: 0, problem: `no answer: ${String(error)}`, request: url.pathname })
          const kind = (byKind[c.kind] ??= {})
          kind["no answer"] = (kind["no answer"] ?? 0) + 1
          continue
        }
        const bucket = `${String(status)[0]}xx`
        statuses[bucket] = (statuses[bucket] ?? 0) + 1
        const kind = (byKind[c.kind] ??= {})
        kind[String(status)] = (kind[String(status)] ?? 0) + 1
        const request = `${url.pathname}${url.search.slice(0, 200)}`
        if (status >= 500) findings.push({ endpoint: label, case: c.name, status, problem: `5xx: ${text.slice(0, 300)}`, request })
        else if (status >= 400 && detailOf(text) === undefined) {
          findings.push({ endpoint: label, case: c.name, status, problem: `4xx without a detail: ${text.slice(0, 200)}`, request })
        }
      }
    }
  }
  const health = await fetch(new URL(options.healthPath ?? "/health", options.baseUrl)).then((r) => r.status, () => 0)
  if (health !== 200) findings.push({ endpoint: "GET /health", case: "after fuzzing", status: health, problem: "the service is not healthy after the run", request: "/health" })
  return { requests, endpoints: endpoints.length, statuses, findings, byKind }
}
