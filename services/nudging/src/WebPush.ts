/**
 * Web push (RFC 8030/8291/8292): `web-push` encrypts the payload (aes128gcm) for the
 * subscription's keys and signs the VAPID JWT; the request goes out through Effect's
 * `HttpClient` (timeouts, spans, `traceparent`), so the answer of the push service is classified
 * here:
 *
 * - 2xx: delivered to the push service;
 * - 404, 410: the subscription is gone (the caller disables it);
 * - 408, 429, 5xx, network failures, timeouts: worth retrying (`Retry-After` honoured);
 * - other 4xx: refused for good (a payload too large, a VAPID key the service rejects).
 *
 * Endpoints are checked against `WEBPUSH_ALLOWED_ENDPOINTS` (the browsers' push services by
 * default), at subscription and at sending: a user must not make the service POST to any URL.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
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
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    return false
  }
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

export class WebPush extends Effect.Service<WebPush>()("nudging/WebPush", {
  effect: Effect.gen(function*() {
    const keys = yield* Keys
    const settings = yield* Settings
    const client = yield* HttpClient.HttpClient
    const privateKey = Redacted.value(keys.vapid.privateKey)

    // One VAPID JWT per push service origin for 12 hours (renewed an hour before it expires):
    // signing it is the dearest part of a push, and push services accept it until `exp`.
    const vapidHeaders = new Map<string, { readonly authorization: string; readonly expires: number }>()
    const vapidLifetime = 12 * 3600
    const authorizationFor = (endpoint: string, nowSeconds: number) => {
      const audience = new URL(endpoint).origin
      const cached = vapidHeaders.get(audience)
      if (cached !== undefined && cached.expires - 3600 > nowSeconds) return cached.authorization
      const expires = nowSeconds + vapidLifetime
      const headers = webpush.getVapidHeaders(audience, keys.vapid.subject, keys.vapid.publicKey, privateKey, "aes128gcm", expires)
      vapidHeaders.set(audience, { authorization: headers.Authorization, expires })
      return headers.Authorization
    }

    const send = (target: Target, payload: PushPayload, severity: Domain.Severity): Effect.Effect<SendResult> =>
      Effect.gen(function*() {
        if (!endpointAllowed(settings.pushEndpoints, target.endpoint)) {
          return { _tag: "Rejected", message: "the endpoint is not an allowed push service (WEBPUSH_ALLOWED_ENDPOINTS)" } as const
        }
        // The push service checks `exp` against its own clock: the wall clock, whatever the
        // service's logic is told the time is.
        const nowSeconds = Math.floor(Date.now() / 1000)
        const details = yield* Effect.try(() => {
          // Encrypted for the subscription's keys; the VAPID header is the cached one.
          const request = webpush.generateRequestDetails(
            { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
            JSON.stringify(payload),
            { TTL: settings.pushTtlSeconds, urgency: urgencyOf(severity), contentEncoding: "aes128gcm" }
          )
          return { ...request, headers: { ...request.headers, Authorization: authorizationFor(target.endpoint, nowSeconds) } }
        }).pipe(Effect.either)
        if (details._tag === "Left") {
          const cause = details.left.error
          return { _tag: "Rejected", message: `cannot encrypt for this subscription: ${cause instanceof Error ? cause.message : String(cause)}` } as const
        }
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(details.right.headers)) {
          if (/^content-(length|type)$/i.test(name)) continue
          headers[name] = String(value)
        }
        const request = HttpClientRequest.post(target.endpoint).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.bodyUint8Array(details.right.body ?? new Uint8Array(), "application/octet-stream")
        )
        return yield* client.execute(request).pipe(
          Effect.flatMap((response): Effect.Effect<SendResult> => {
            const status = response.status
            if (status >= 200 && status < 300) return Effect.succeed({ _tag: "Delivered", status })
            return Effect.map(
              response.text.pipe(Effect.orElseSucceed(() => "")),
              (text): SendResult => {
                const message = `push service answered ${status}${text.trim() === "" ? "" : `: ${text.trim().slice(0, 200)}`}`
                if (status === 404 || status === 410) return { _tag: "Gone", status, message }
                if (status === 408 || status === 429 || status >= 500) {
                  return { _tag: "Retry", message, retryAfter: retryAfterOf(response.headers["retry-after"]) }
                }
                return { _tag: "Rejected", message }
              }
            )
          }),
          Effect.scoped,
          Effect.timeoutFail({ duration: settings.pushTimeout, onTimeout: () => "timeout" as const }),
          Effect.catchAll((error): Effect.Effect<SendResult> =>
            Effect.succeed({
              _tag: "Retry",
              message: error === "timeout"
                ? `push service did not answer within ${Duration.format(settings.pushTimeout)}`
                : `push service unreachable: ${error.message}`,
              retryAfter: undefined
            })
          )
        )
      }).pipe(Effect.withSpan("WebPush.send"))

    return { send, publicKey: keys.vapid.publicKey }
  })
}) {}
