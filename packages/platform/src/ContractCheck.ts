/**
 * Does a running service do what its OpenAPI document says? The document served at
 * `/openapi.json` (or `openapiPath`) must be valid OpenAPI 3.1; for every operation, requests a
 * well-behaved client could send by mistake are made over real HTTP, and each answer is compared
 * with the document:
 *
 * - without credentials: an operation that declares security must answer 401 (and document it);
 *   one that declares none must not ask for credentials;
 * - with the given token: an empty JSON object as the body (or no body), a body that is not JSON
 *   and a body nested deeper than the kit accepts (operations with a body);
 * - every status must be documented for the operation, no answer may be a 5xx, and a JSON body
 *   must validate against the documented schema of its status (error bodies included).
 *
 * `check` returns what disagrees (empty when the document tells the truth). Each service's tests
 * run it against the service started with its real layers; the contract fuzzing of the platform
 * builds on the same walk.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { Ajv2020 } from "ajv/dist/2020.js"

export interface Options {
  /** The service's base URL (`http://127.0.0.1:<port>`). */
  readonly baseUrl: string
  /** Where the document is served (default `/openapi.json`). */
  readonly openapiPath?: string | undefined
  /** A bearer token the secured operations accept (without one, only anonymous probes run). */
  readonly token?: string | undefined
  /** The value put in a path parameter (default `"probe"`). */
  readonly pathValue?: ((name: string, path: string) => string) | undefined
  /** Operations left out, as `"GET /path/{id}"`. */
  readonly skip?: ReadonlyArray<string> | undefined
  /** Extra headers on every request (a proxy's header, a source service). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

export interface Finding {
  /** `"POST /items"` */
  readonly operation: string
  /** Which probe: `anonymous`, `empty body`, `invalid JSON`, `deep JSON`. */
  readonly probe: string
  readonly status: number
  readonly problem: string
}

export interface Report {
  /** Requests made. */
  readonly requests: number
  readonly findings: ReadonlyArray<Finding>
}

type JsonSchema = Record<string, unknown>

interface Operation {
  readonly security?: ReadonlyArray<Record<string, unknown>>
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly required?: boolean }>
  readonly requestBody?: { readonly content: Record<string, unknown> }
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema?: JsonSchema }> }>
}

interface Document {
  readonly security?: ReadonlyArray<Record<string, unknown>>
  readonly components?: { readonly schemas?: Record<string, JsonSchema> }
  readonly paths: Record<string, Record<string, Operation>>
}

const methods = ["get", "post", "put", "patch", "delete"] as const

interface Probe {
  readonly name: string
  readonly token: boolean
  readonly body?: { readonly text: string; readonly contentType: string } | undefined
}

const deepJson = "[".repeat(1000) + "]".repeat(1000)

/** The probes of one operation. */
const probesOf = (operation: Operation, secured: boolean, hasToken: boolean): ReadonlyArray<Probe> => {
  const jsonBody = operation.requestBody?.content["application/json"] !== undefined
  const probes: Array<Probe> = []
  const empty = jsonBody ? { text: "{}", contentType: "application/json" } : undefined
  if (secured) probes.push({ name: "anonymous", token: false, body: empty })
  if (!secured || hasToken) {
    probes.push({ name: "empty body", token: secured, body: empty })
    if (jsonBody) {
      probes.push({ name: "invalid JSON", token: secured, body: { text: "{\"a\": ", contentType: "application/json" } })
      probes.push({ name: "deep JSON", token: secured, body: { text: deepJson, contentType: "application/json" } })
    }
  }
  return probes
}

/** Runs the walk; never throws for a disagreement, only for an unreachable service. */
export const check = async (options: Options): Promise<Report> => {
  const openapiPath = options.openapiPath ?? "/openapi.json"
  const documentResponse = await fetch(new URL(openapiPath, options.baseUrl))
  if (!documentResponse.ok) throw new Error(`${openapiPath} answered ${documentResponse.status}`)
  const document = (await documentResponse.json()) as Document
  const findings: Array<Finding> = []
  const validity = await new Validator().validate(document as never)
  if (!validity.valid) {
    findings.push({
      operation: `GET ${openapiPath}`,
      probe: "document",
      status: documentResponse.status,
      problem: `not a valid OpenAPI document: ${JSON.stringify(validity.errors).slice(0, 400)}`
    })
  }
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
  ajv.addSchema({ $id: "doc", components: document.components ?? {} })
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const validatorOf = (schema: JsonSchema) => {
    const key = JSON.stringify(schema)
    let validate = validators.get(key)
    if (validate === undefined) {
      // Component references point into the document registered above.
      const rebased = JSON.parse(key.replace(/"#\/components\//g, "\"doc#/components/")) as JsonSchema
      validate = ajv.compile(rebased)
      validators.set(key, validate)
    }
    return validate
  }

  let requests = 0
  const skip = new Set(options.skip ?? [])
  const pathValue = options.pathValue ?? (() => "probe")

  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method]
      if (operation === undefined) continue
      const name = `${method.toUpperCase()} ${template}`
      if (skip.has(name)) continue
      const security = operation.security ?? document.security ?? []
      const secured = security.length > 0
      const path = template.replace(/\{([^}]+)\}/g, (_, param: string) => encodeURIComponent(pathValue(param, template)))
      const documented = operation.responses

      for (const probe of probesOf(operation, secured, options.token !== undefined)) {
        const headers: Record<string, string> = { ...options.headers }
        if (probe.token && options.token !== undefined) headers.authorization = `Bearer ${options.token}`
        if (probe.body !== undefined) headers["content-type"] = probe.body.contentType
        requests++
        const response = await fetch(new URL(path, options.baseUrl), {
          method: method.toUpperCase(),
          headers,
          body: probe.body?.text
        })
        const text = await response.text()
        const status = response.status
        const report = (problem: string) => findings.push({ operation: name, probe: probe.name, status, problem })

        if (status >= 500) report(`answered ${status}: ${text.slice(0, 200)}`)
        if (probe.name === "anonymous" && status !== 401) report(`declares security but answered ${status} without credentials`)
        if (!secured && status === 401) report("declares no security but asked for credentials")
        if (probe.name === "deep JSON" && status !== 400 && status !== 401 && status !== 403) {
          report(`a body nested 1,000 levels deep was answered ${status}, not 400`)
        }
        const declared = documented[String(status)] ?? documented[`${String(status)[0]}XX`] ?? documented.default
        if (declared === undefined) {
          report(`status ${status} is not documented (documented: ${Object.keys(documented).join(", ")})`)
          continue
        }
        const contentType = response.headers.get("content-type") ?? ""
        const schema = declared.content?.["application/json"]?.schema
        if (!contentType.includes("json") || schema === undefined) {
          if (status >= 400 && !contentType.includes("json")) report(`error answer is not JSON (${contentType})`)
          continue
        }
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          report("answer says JSON but is not")
          continue
        }
        const validate = validatorOf(schema)
        if (!validate(json)) {
          report(`body does not match the documented schema: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 200)}`)
        }
      }
    }
  }
  return { requests, findings }
}
