/**
 * Web push (RFC 8030/8291/8292): `web-push` encrypts the payload (aes128gcm) for the
 * subscription's keys and signs the VAPID JWT; the request goes out through `node:http(s)` with
 * a keep-alive agent, and the answer of the push service is classified here:
 *
 * - 2xx: delivered to the push service;
 * - 404, 410: the subscription is gone (the caller disables it);
 * - 408, 429, 5xx, network failures, timeouts: worth retrying (`Retry-After` honoured);
 * - other 4xx: refused for good (a payload too large, a VAPID key the service rejects).
 *
 * Not Effect's `HttpClient`: a push is one POST with a small body whose answer is a status, and
 * the client's request and response objects, header records, stream body and scope cost about
 * 1 ms of CPU per push here, several times the encryption, on the vCPUs the ingests need. The
 * `traceparent` it sent is still sent (this span's with tracing on, else the caller's incoming
 * one), and the timeout still bounds the whole exchange.
 *
 * Endpoints are checked against `WEBPUSH_ALLOWED_ENDPOINTS` (the browsers' push services by
 * default), at subscription and at sending: a user must not make the service POST to any URL.
 */
import { Tracing } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Tracer from "effect/Tracer"
import * as http from "node:http"
import * as https from "node:https"
import webpush from "web-push"
import type * as Domain from "./Domain.js"
import { Keys } from "./Keys.js"
import { Settings } from "./Settings.js"

export interface Target {
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
}

export interface PushPayload {
  readonly title: string
  readonly body: string
  readonly data: {
    readonly url: string
    readonly notification_id?: string | undefined
    readonly rule_id?: string | undefined
    readonly click_token?: string | undefined
  }
}

export type SendResult =
  | { readonly _tag: "Delivered"; readonly status: number }
  | { readonly _tag: "Gone"; readonly status: number; readonly message: string }
  | { readonly _tag: "Retry"; readonly message: string; readonly retryAfter: Duration.Duration | undefined }
  | { readonly _tag: "Rejected"; readonly message: string }

/** Urgency header (RFC 8030 5.3) of a notification's severity. */
export const urgencyOf = (severity: Domain.Severity): "low" | "normal" | "high" =>
  severity === "critical" ? "high" : severity === "warning" ? "normal" : "low"

const patternSyntax = /^(https?):\/\/(\*\.)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d+|\*))?$/

/** Whether `endpoint` is on the allow-list (`https://host`, `https://*.domain`, `http://127.0.0.1:*`, or `*`). */
export const endpointAllowed = (patterns: ReadonlyArray<string>, endpoint: string): boolean => {
  const url = parseEndpoint(endpoint)
  return url !== undefined && urlAllowed(patterns, url)
}

const parseEndpoint = (endpoint: string): URL | undefined => {
  try {
    return new URL(endpoint)
  } catch {
    return undefined
  }
}

const urlAllowed = (patterns: ReadonlyArray<string>, url: URL): boolean => {
  if (url.username !== "" || url.password !== "") return false
  const protocol = url.protocol.slice(0, -1)
  const port = url.port === "" ? (protocol === "https" ? "443" : "80") : url.port
  return patterns.some((pattern) => {
    if (pattern === "*") return protocol === "https"
    const match = patternSyntax.exec(pattern)
    if (match === null || match[1] !== protocol) return false
    const [, , wildcard, host, patternPort] = match
    const hostOk = wildcard === undefined
      ? url.hostname.toLowerCase() === host!.toLowerCase()
      : url.hostname.toLowerCase().endsWith(`.${host!.toLowerCase()}`)
    const portOk = patternPort === "*" || (patternPort ?? (protocol === "https" ? "443" : "80")) === port
    return hostOk && portOk
  })
}

/** Checks that the keys are a P-256 public point (65 bytes) and a 16-byte secret. */
export const keyProblems = (keys: { readonly p256dh: string; readonly auth: string }): ReadonlyArray<{ readonly field: "p256dh" | "auth"; readonly message: string }> => {
  const problems: Array<{ field: "p256dh" | "auth"; message: string }> = []
  const point = Buffer.from(keys.p256dh, "base64url")
  if (point.length !== 65 || point[0] !== 4) {
    problems.push({ field: "p256dh", message: "Expected the browser's P-256 public key: 65 bytes starting with 0x04, base64url" })
  }
  if (Buffer.from(keys.auth, "base64url").length !== 16) {
    problems.push({ field: "auth", message: "Expected the browser's authentication secret: 16 bytes, base64url" })
  }
  return problems
}

const retryAfterOf = (value: string | undefined): Duration.Duration | undefined => {
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return Duration.seconds(seconds)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - Date.now()))
}

/** What the push service answered: its status, and for a failure its text and `Retry-After`. */
interface Answer {
  readonly status: number
  readonly text: string
  readonly retryAfter: string | undefined
}

/** A push service's error text kept for the record (the rest is drained). */
const maxErrorText = 2048

const classify = (answer: Answer): SendResult => {
  const { status } = answer
  if (status >= 200 && status < 300) return { _tag: "Delivered", status }
  const text = answer.text.trim()
  const message = `push service answered ${status}${text === "" ? "" : `: ${text.slice(0, 200)}`}`
  if (status === 404 || status === 410) return { _tag: "Gone", status, message }
  if (status === 408 || status === 429 || status >= 500) {
    return { _tag: "Retry", message, retryAfter: retryAfterOf(answer.retryAfter) }
  }
  return { _tag: "Rejected", message }
}

/** The span a trace came in with (the root of the current span's chain), if it came from outside. */
const externalRoot = (span: Tracer.AnySpan): Tracer.ExternalSpan | undefined => {
  let current: Tracer.AnySpan = span
  while (current._tag === "Span") {
    if (Option.isNone(current.parent)) return undefined
    current = current.parent.value
  }
  return current
}

const traceparentOf = (span: Tracer.AnySpan) => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

export class WebPush extends Effect.Service<WebPush>()("nudging/WebPush", {
  scoped: Effect.gen(function*() {
    const keys = yield* Keys
    const settings = yield* Settings
    const tracing = yield* Tracing.TracingEnabled
    const privateKey = Redacted.value(keys.vapid.privateKey)
    const timeoutMs = Duration.toMillis(settings.pushTimeout)
    const ttl = String(settings.pushTtlSeconds)

    // Connections to the push services kept open between pushes (a handful of origins, many
    // pushes each): no TCP and TLS handshake per push.
    const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, scheduling: "lifo" } as const
    const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        agents.http.destroy()
        agents.https.destroy()
      })
    )

    // One VAPID JWT per push service origin for 12 hours (renewed an hour before it expires):
    // signing it is the dearest part of a push, and push services accept it until `exp`.
    const vapidHeaders = new Map<string, { readonly authorization: string; readonly expires: number }>()
    const vapidLifetime = 12 * 3600
    const authorizationFor = (audience: string, nowSeconds: number) => {
      const cached = vapidHeaders.get(audience)
      if (cached !== undefined && cached.expires - 3600 > nowSeconds) return cached.authorization
      const expires = nowSeconds + vapidLifetime
      const headers = webpush.getVapidHeaders(audience, keys.vapid.subject, keys.vapid.publicKey, privateKey, "aes128gcm", expires)
      vapidHeaders.set(audience, { authorization: headers.Authorization, expires })
      return headers.Authorization
    }

    /**
     * POSTs the body and resumes with the answer (a 2xx as soon as its status arrives, its body
     * drained by the agent); never fails: network errors and the timeout are `Retry`.
     * Interrupted, the request is destroyed.
     */
    const post = (url: URL, headers: http.OutgoingHttpHeaders, body: Buffer) =>
      Effect.async<SendResult>((resume) => {
        let settled = false
        let request: http.ClientRequest | undefined
        const timer = setTimeout(() => {
          retry(`push service did not answer within ${Duration.format(settings.pushTimeout)}`)
          request?.destroy()
        }, timeoutMs)
        const settle = (result: SendResult) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(Effect.succeed(result))
        }
        const retry = (message: string) => settle({ _tag: "Retry", message, retryAfter: undefined })
        const secure = url.protocol === "https:"
        const start = (again: boolean) => {
          try {
            request = (secure ? https : http).request({
              protocol: url.protocol,
              hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
              port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
              path: `${url.pathname}${url.search}`,
              method: "POST",
              headers,
              agent: secure ? agents.https : agents.http
            })
          } catch (cause) {
            // Headers or an address node refuses: sending again would not help.
            settle({ _tag: "Rejected", message: `cannot send to this endpoint: ${cause instanceof Error ? cause.message : String(cause)}` })
            return
          }
          const sent = request
          sent.on("error", (error: NodeJS.ErrnoException) => {
            // A kept-alive connection the push service had closed (its idle timeout) before
            // reading this request: sent again once on a new connection, as Node advises.
            if (!again && !settled && sent.reusedSocket && error.code === "ECONNRESET") start(true)
            else retry(`push service unreachable: ${error.message}`)
          })
          sent.on("response", (response) => {
            const status = response.statusCode ?? 0
            // An answer cut short: a retry unless settled already (an unheard `error` would throw).
            response.on("error", (error) => retry(`push service unreachable: ${error.message}`))
            if (status >= 200 && status < 300) {
              response.resume()
              settle({ _tag: "Delivered", status })
              return
            }
            let text = ""
            response.setEncoding("utf8")
            response.on("data", (chunk: string) => {
              if (text.length < maxErrorText) text += chunk
            })
            const retryAfter = response.headers["retry-after"]
            response.on("end", () => settle(classify({ status, text, retryAfter })))
          })
          sent.end(body)
        }
        start(false)
        return Effect.sync(() => {
          settled = true
          clearTimeout(timer)
          request?.destroy()
        })
      })

    const send = (target: Target, payload: PushPayload, severity: Domain.Severity): Effect.Effect<SendResult> =>
      Effect.suspend(() => {
        const url = parseEndpoint(target.endpoint)
        if (url === undefined || !urlAllowed(settings.pushEndpoints, url)) {
          return Effect.succeed<SendResult>({ _tag: "Rejected", message: "the endpoint is not an allowed push service (WEBPUSH_ALLOWED_ENDPOINTS)" })
        }
        let cipherText: Buffer
        try {
          // Encrypted for the subscription's keys with a new key pair and salt (RFC 8291).
          cipherText = webpush.encrypt(target.p256dh, target.auth, JSON.stringify(payload), "aes128gcm").cipherText
        } catch (cause) {
          return Effect.succeed<SendResult>({
            _tag: "Rejected",
            message: `cannot encrypt for this subscription: ${cause instanceof Error ? cause.message : String(cause)}`
          })
        }
        // The push service checks `exp` against its own clock: the wall clock, whatever the
        // service's logic is told the time is.
        const headers: http.OutgoingHttpHeaders = {
          TTL: ttl,
          Urgency: urgencyOf(severity),
          "Content-Encoding": "aes128gcm",
          "Content-Type": "application/octet-stream",
          "Content-Length": cipherText.length,
          Authorization: authorizationFor(url.origin, Math.floor(Date.now() / 1000))
        }
        return Effect.flatMap(Effect.option(Effect.currentSpan), (span) => {
          // With tracing on this span is exported: the push service's side joins it; off, the
          // caller's incoming trace is passed on (as the kit's outbound client does).
          const parent = span._tag === "None" ? undefined : tracing ? span.value : externalRoot(span.value)
          if (parent !== undefined) headers["traceparent"] = traceparentOf(parent)
          return post(url, headers, cipherText)
        })
        // The call site is always this line: no stack captured per push.
      }).pipe(Effect.withSpan("WebPush.send", { captureStackTrace: false }))

    return { send, publicKey: keys.vapid.publicKey }
  })
}) {}
