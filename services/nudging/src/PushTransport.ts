/**
 * One web push (RFC 8030/8291/8292), without Effect: `web-push` encrypts the payload (aes128gcm)
 * for the subscription's keys and signs the VAPID JWT; the request goes out through
 * `node:http(s)` with a keep-alive agent, and the push service's answer is classified:
 *
 * - 2xx: delivered to the push service;
 * - 404, 410: the subscription is gone (the caller disables it);
 * - 408, 429, 5xx, network failures, timeouts: worth retrying (`Retry-After` honoured);
 * - other 4xx: refused for good (a payload too large, a VAPID key the service rejects).
 *
 * Plain functions and callbacks, no Effect runtime: the same code runs in the service's thread
 * (`NUDGING_PUSH_WORKERS=0`) and in the push worker threads (`PushWorker.ts`), which load only
 * this module, `web-push` and `node:http(s)`. Results are plain objects (a `Retry-After` in
 * milliseconds) so they cross `postMessage` as they are.
 *
 * Endpoints are checked against `WEBPUSH_ALLOWED_ENDPOINTS` (the browsers' push services by
 * default), at subscription and at sending: a user must not make the service POST to any URL.
 */
import * as http from "node:http"
import * as https from "node:https"
import webpush from "web-push"

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

export type Urgency = "low" | "normal" | "high"

/** One push to send: what crosses to a worker thread. */
export interface PushRequest {
  readonly target: Target
  readonly payload: PushPayload
  readonly urgency: Urgency
  /** W3C `traceparent` to send with the push, if any. */
  readonly traceparent: string | undefined
}

export type TransportResult =
  | { readonly _tag: "Delivered"; readonly status: number }
  | { readonly _tag: "Gone"; readonly status: number; readonly message: string }
  | { readonly _tag: "Retry"; readonly message: string; readonly retryAfterMillis: number | undefined }
  | { readonly _tag: "Rejected"; readonly message: string }

/** What a transport needs; structured-cloneable (a worker thread gets it as `workerData`). */
export interface TransportOptions {
  readonly vapid: { readonly subject: string; readonly publicKey: string; readonly privateKey: string }
  readonly ttlSeconds: number
  readonly timeoutMillis: number
  /** `WEBPUSH_ALLOWED_ENDPOINTS`. */
  readonly endpoints: ReadonlyArray<string>
}

export interface Transport {
  /** Sends the push and calls `done` once with its result (never throws); returns a canceller (destroys the request). */
  readonly send: (request: PushRequest, done: (result: TransportResult) => void) => () => void
  /** Closes the kept-alive connections. */
  readonly close: () => void
}

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

const retryAfterOf = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** What the push service answered: its status, and for a failure its text and `Retry-After`. */
interface Answer {
  readonly status: number
  readonly text: string
  readonly retryAfter: string | undefined
}

/** A push service's error text kept for the record (the rest is drained). */
const maxErrorText = 2048

const classify = (answer: Answer): TransportResult => {
  const { status } = answer
  if (status >= 200 && status < 300) return { _tag: "Delivered", status }
  const text = answer.text.trim()
  const message = `push service answered ${status}${text === "" ? "" : `: ${text.slice(0, 200)}`}`
  if (status === 404 || status === 410) return { _tag: "Gone", status, message }
  if (status === 408 || status === 429 || status >= 500) {
    return { _tag: "Retry", message, retryAfterMillis: retryAfterOf(answer.retryAfter) }
  }
  return { _tag: "Rejected", message }
}

const formatSeconds = (millis: number) => `${millis / 1000}s`

export const makeTransport = (options: TransportOptions): Transport => {
  const ttl = String(options.ttlSeconds)
  // Connections to the push services kept open between pushes (a handful of origins, many
  // pushes each): no TCP and TLS handshake per push. As many kept free as may be in use: the
  // Dispatcher sends up to 32 pushes at once, and with fewer free sockets allowed (it was 16)
  // every burst closed the connections above that number and opened them again for the next
  // (989 connections for 2,200 pushes in the benchmark, a TCP setup and teardown on both sides
  // for almost every other push).
  const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, scheduling: "lifo" } as const
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }

  // One VAPID JWT per push service origin for 12 hours (renewed an hour before it expires):
  // signing it is the dearest part of a push, and push services accept it until `exp`.
  const vapidHeaders = new Map<string, { readonly authorization: string; readonly expires: number }>()
  const vapidLifetime = 12 * 3600
  const authorizationFor = (audience: string, nowSeconds: number) => {
    const cached = vapidHeaders.get(audience)
    if (cached !== undefined && cached.expires - 3600 > nowSeconds) return cached.authorization
    const expires = nowSeconds + vapidLifetime
    const { subject, publicKey, privateKey } = options.vapid
    const headers = webpush.getVapidHeaders(audience, subject, publicKey, privateKey, "aes128gcm", expires)
    vapidHeaders.set(audience, { authorization: headers.Authorization, expires })
    return headers.Authorization
  }

  /**
   * POSTs the body and calls `done` with the answer (a 2xx as soon as its status arrives, its
   * body drained by the agent); network errors and the timeout are `Retry`.
   */
  const post = (url: URL, headers: http.OutgoingHttpHeaders, body: Buffer, done: (result: TransportResult) => void) => {
    let settled = false
    let request: http.ClientRequest | undefined
    const timer = setTimeout(() => {
      retry(`push service did not answer within ${formatSeconds(options.timeoutMillis)}`)
      request?.destroy()
    }, options.timeoutMillis)
    const settle = (result: TransportResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      done(result)
    }
    const retry = (message: string) => settle({ _tag: "Retry", message, retryAfterMillis: undefined })
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
    return () => {
      settled = true
      clearTimeout(timer)
      request?.destroy()
    }
  }

  const send = (push: PushRequest, done: (result: TransportResult) => void): () => void => {
    const url = parseEndpoint(push.target.endpoint)
    if (url === undefined || !urlAllowed(options.endpoints, url)) {
      done({ _tag: "Rejected", message: "the endpoint is not an allowed push service (WEBPUSH_ALLOWED_ENDPOINTS)" })
      return () => {}
    }
    let cipherText: Buffer
    try {
      // Encrypted for the subscription's keys with a new key pair and salt (RFC 8291).
      cipherText = webpush.encrypt(push.target.p256dh, push.target.auth, JSON.stringify(push.payload), "aes128gcm").cipherText
    } catch (cause) {
      done({ _tag: "Rejected", message: `cannot encrypt for this subscription: ${cause instanceof Error ? cause.message : String(cause)}` })
      return () => {}
    }
    // The push service checks `exp` against its own clock: the wall clock, whatever the
    // service's logic is told the time is.
    const headers: http.OutgoingHttpHeaders = {
      TTL: ttl,
      Urgency: push.urgency,
      "Content-Encoding": "aes128gcm",
      "Content-Type": "application/octet-stream",
      "Content-Length": cipherText.length,
      Authorization: authorizationFor(url.origin, Math.floor(Date.now() / 1000))
    }
    if (push.traceparent !== undefined) headers["traceparent"] = push.traceparent
    return post(url, headers, cipherText, done)
  }

  return {
    send,
    close: () => {
      agents.http.destroy()
      agents.https.destroy()
    }
  }
}
