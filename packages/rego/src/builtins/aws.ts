// providers.aws.sign_req: signs an http.send request object with AWS Signature Version 4,
// following OPA's implementation (topdown/providers.go and internal/providers/aws), including
// its checks, their order and their messages.
//
// One deliberate difference: OPA accepts a timestamp only when its number literal reads as an
// integer (`1e9` is refused, `1000000000` accepted); this engine does not keep literal text, so
// it refuses negative, fractional and out-of-range timestamps instead (a signature dated before
// 1970 is meaningless anyway).

import { createHash, createHmac } from "node:crypto"
import { type PlainObject, type RegoObject, type Value, isObject, objectEntries, objectGet, RegoSet, setOwn } from "../value.js"
import { formatValue } from "../format.js"
import { marshalGoJSON } from "./gojson.js"
import { escapedPath, GoURLError, parseURL } from "./gourl.js"
import { checkHTTPRequestKeys } from "./httprequest.js"
import { asBuiltinError, type BuiltinDef, operandError, typeError } from "./registry.js"

const REQUIRED_CONFIG = ["aws_access_key", "aws_region", "aws_secret_access_key", "aws_service"]

/** Headers a proxy may rewrite, left out of the signature (as the AWS SDKs do). */
const IGNORED_HEADERS = new Set(["authorization", "user-agent", "x-amzn-trace-id"])

const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
const MAX_INT64 = 2n ** 63n - 1n

/** A set of terms as OPA prints it in messages: `{"a", "b"}`. */
const setText = (terms: Value[]): string => formatValue(RegoSet.of(terms))

const stringOf = (v: Value | undefined): string => (typeof v === "string" ? v : "")


const sha256Hex = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex")
const hmac = (key: Buffer | string, data: string): Buffer => createHmac("sha256", key).update(data, "utf8").digest()

const checkConfig = (config: RegoObject): void => {
  const missing = REQUIRED_CONFIG.filter((k) => objectGet(config, k) === undefined)
  if (missing.length > 0) throw operandError(2, `missing required AWS config parameters(s): ${setText(missing)}`)
  const invalid = REQUIRED_CONFIG.filter((k) => typeof objectGet(config, k) !== "string")
  if (invalid.length > 0) throw operandError(2, `invalid values for required AWS config parameters(s): ${setText(invalid)}`)
}

/** The signing time in nanoseconds since the epoch. */
const timestampOperand = (v: Value): bigint => {
  if (typeof v !== "number" && typeof v !== "bigint") throw typeError(1, v, "number")
  const ns = typeof v === "bigint" ? v : Number.isInteger(v) ? BigInt(v) : -1n
  if (ns < 0n || ns > MAX_INT64) throw operandError(3, "could not convert time_ns value into a unix timestamp")
  return ns
}

/** The payload: raw_body when present, else the JSON of body, else nothing. */
const payload = (req: RegoObject): string => {
  const raw = objectGet(req, "raw_body")
  if (raw !== undefined) return stringOf(raw)
  const body = objectGet(req, "body")
  return body === undefined ? "" : marshalGoJSON(body)
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

export interface SigV4Input {
  readonly method: string
  readonly url: string
  /** Request headers (values already strings). */
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
  readonly service: string
  readonly region: string
  readonly accessKey: string
  readonly secretKey: string
  readonly sessionToken: string
  readonly timeNs: bigint
  readonly disablePayloadSigning: boolean
}

/** Signs a request; returns the Authorization header and the headers the signature adds. */
export const signV4 = (r: SigV4Input): { authorization: string; added: Map<string, string> } => {
  const url = parseURL(r.url)
  const time = new Date(Number(r.timeNs / 1_000_000n))
  const date = `${pad(time.getUTCFullYear(), 4)}${pad(time.getUTCMonth() + 1)}${pad(time.getUTCDate())}`
  const stamp = `${date}T${pad(time.getUTCHours())}${pad(time.getUTCMinutes())}${pad(time.getUTCSeconds())}Z`
  const contentSha256 = r.disablePayloadSigning ? UNSIGNED_PAYLOAD : sha256Hex(Buffer.from(r.body, "utf8"))

  const added = new Map<string, string>([
    ["host", url.host],
    ["x-amz-date", stamp]
  ])
  // S3 and Glacier want the payload hash as a header too.
  if (r.service === "s3" || r.service === "glacier") added.set("x-amz-content-sha256", contentSha256)
  if (r.sessionToken !== "") added.set("x-amz-security-token", r.sessionToken)

  const signed = new Map(added)
  for (const [k, v] of r.headers) {
    const lower = k.toLowerCase()
    if (!IGNORED_HEADERS.has(lower)) signed.set(lower, v)
  }
  const names = [...signed.keys()].sort()
  const canonical = [r.method, escapedPath(url), url.rawQuery, ...names.map((k) => `${k}:${signed.get(k)}`), "", names.join(";"), contentSha256].join("\n")
  const scope = `${date}/${r.region}/${r.service}/aws4_request`
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, sha256Hex(canonical)].join("\n")
  let key = hmac("AWS4" + r.secretKey, date)
  for (const part of [r.region, r.service, "aws4_request"]) key = hmac(key, part)
  const signature = hmac(key, toSign).toString("hex")
  const authorization = `AWS4-HMAC-SHA256 Credential=${r.accessKey}/${scope},SignedHeaders=${names.join(";")},Signature=${signature}`
  return { authorization, added }
}

const signRequest = (reqV: Value, configV: Value, timeV: Value): Value => {
  if (!isObject(reqV)) throw typeError(1, reqV, "object")
  if (!isObject(configV)) throw typeError(1, configV, "object")
  checkConfig(configV)
  const timeNs = timestampOperand(timeV)
  checkHTTPRequestKeys(reqV)

  const headersV = objectGet(reqV, "headers")
  if (headersV !== undefined && !isObject(headersV)) throw typeError(0, headersV, "object")
  const invalid = ["method", "url"].filter((k) => typeof objectGet(reqV, k) !== "string")
  if (invalid.length > 0) throw operandError(1, `invalid values for required request parameters(s): ${setText(invalid)}`)

  // Header names and values that are not strings count as empty strings, as in OPA.
  const headers = new Map<string, string>()
  if (headersV !== undefined) for (const [k, v] of objectEntries(headersV as RegoObject)) headers.set(stringOf(k), stringOf(v))

  const disable = objectGet(configV, "disable_payload_signing")
  if (disable !== undefined && typeof disable !== "boolean") throw operandError(2, "invalid value for 'disable_payload_signing' in AWS config")

  const signature = asBuiltinError(GoURLError, () =>
    signV4({
      method: objectGet(reqV, "method") as string,
      url: objectGet(reqV, "url") as string,
      headers,
      body: payload(reqV),
      service: stringOf(objectGet(configV, "aws_service")),
      region: stringOf(objectGet(configV, "aws_region")),
      accessKey: stringOf(objectGet(configV, "aws_access_key")),
      secretKey: stringOf(objectGet(configV, "aws_secret_access_key")),
      sessionToken: stringOf(objectGet(configV, "aws_session_token")),
      timeNs,
      disablePayloadSigning: disable === true
    })
  )

  const signedHeaders: PlainObject = {}
  for (const [k, v] of headers) setOwn(signedHeaders, k, v)
  setOwn(signedHeaders, "Authorization", signature.authorization)
  for (const [k, v] of signature.added) setOwn(signedHeaders, k, v)
  const out: PlainObject = {}
  for (const [k, v] of objectEntries(reqV)) setOwn(out, k as string, v)
  setOwn(out, "headers", signedHeaders)
  return out
}

export const aws: BuiltinDef[] = [{ name: "providers.aws.sign_req", arity: 3, fn: ([req, config, time]) => signRequest(req, config, time) }]
