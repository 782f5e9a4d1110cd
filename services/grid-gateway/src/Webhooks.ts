/**
 * Webhook deliveries: one JSON POST per alert to the URL the rule's owner set, signed with the
 * owner's secret so the receiver can tell it came from this gateway and was not replayed:
 *
 * ```
 * X-REC-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 * ```
 *
 * Each attempt checks the URL again (`WebhookUrls.resolveTarget`: scheme, public addresses after
 * DNS resolution) and connects to the address it checked; `WEBHOOK_TIMEOUT_SECONDS` bounds an
 * attempt, `WEBHOOK_MAX_ATTEMPTS` the attempts. A 2xx answer is delivered; 408, 429, 5xx, a
 * timeout or a connection failure is tried again after 1 s, 2 s, 4 s...; any other answer
 * (redirects are not followed), or a URL that is no longer acceptable, ends the delivery.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import * as GridConfig from "./Config.js"
import * as WebhookUrls from "./WebhookUrls.js"

/** The signature header's value for `body` sent at `timestamp` (unix seconds). */
export const signature = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${crypto.createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

/**
 * What a receiver does (documented in the README): the signature matches and is recent.
 * `now` in unix seconds; `tolerance` in seconds (default 5 minutes).
 */
export const verify = (secret: string, header: string, body: string, now: number, tolerance = 300): boolean => {
  const parts = new Map(header.split(",").map((p) => {
    const eq = p.indexOf("=")
    return [p.slice(0, eq).trim(), p.slice(eq + 1).trim()] as const
  }))
  const t = Number(parts.get("t"))
  const v1 = parts.get("v1") ?? ""
  if (!Number.isInteger(t) || Math.abs(now - t) > tolerance || !/^[0-9a-f]{64}$/.test(v1)) return false
  const expected = Buffer.from(signature(secret, t, body).split("v1=")[1]!, "hex")
  return crypto.timingSafeEqual(expected, Buffer.from(v1, "hex"))
}

/** A new signing secret (shown to its owner once). */
export const newSecret = (): string => `whsec_${crypto.randomBytes(32).toString("base64url")}`

export interface Delivery {
  readonly url: string
  readonly secret: string
  /** Sent as `X-REC-Delivery`: the same for every attempt, so a receiver can drop repeats. */
  readonly id: string
  readonly body: unknown
}

export type DeliveryResult =
  | { readonly _tag: "Delivered"; readonly status: number; readonly attempts: number }
  | { readonly _tag: "Failed"; readonly reason: string; readonly attempts: number }

type Attempt =
  | { readonly _tag: "Ok"; readonly status: number }
  | { readonly _tag: "Retry"; readonly reason: string }
  | { readonly _tag: "Stop"; readonly reason: string }

export interface WebhookOptions extends GridConfig.WebhookSettings {
  /** First wait between attempts; doubles (default 1 second). */
  readonly backoff?: Duration.DurationInput | undefined
  /** Resolver (tests give a fixed one). */
  readonly lookup?: WebhookUrls.Lookup | undefined
  readonly userAgent?: string | undefined
}

/** One POST to the checked address; never fails (the outcome says what happened). */
const post = (target: WebhookUrls.Target, headers: Record<string, string>, body: string, timeoutMs: number) =>
  Effect.async<Attempt>((resume_, signal) => {
    let done = false
    const resume = (attempt: Effect.Effect<Attempt>) => {
      if (done) return
      done = true
      resume_(attempt)
    }
    const client = target.url.protocol === "https:" ? https : http
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const request = client.request(
      target.url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        // Connect to the address that was checked, whatever the resolver says now.
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }])
          else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family)
        },
        servername: target.hostname,
        agent: false,
        signal
      },
      (response) => {
        const status = response.statusCode ?? 0
        // The answer's body is not used; read it (bounded) so the socket closes cleanly.
        let read = 0
        response.on("data", (chunk: Buffer) => {
          read += chunk.length
          if (read > 64 * 1024) response.destroy()
        })
        response.on("error", () => undefined)
        response.on("close", () => clearTimeout(timer))
        clearTimeout(timer)
        if (status >= 200 && status < 300) resume(Effect.succeed({ _tag: "Ok", status }))
        else if (status === 408 || status === 429 || status >= 500) {
          resume(Effect.succeed({ _tag: "Retry", reason: `the webhook answered ${status}` }))
        } else resume(Effect.succeed({ _tag: "Stop", reason: `the webhook answered ${status}` }))
      }
    )
    request.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.succeed({ _tag: "Retry", reason: `the webhook could not be reached: ${error.message}` }))
    })
    request.end(body)
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })

export const make = (options: WebhookOptions): WebhooksService => {
  const timeoutMs = Duration.toMillis(options.timeout)
  const backoff = Duration.toMillis(Duration.decode(options.backoff ?? Duration.seconds(1)))
  const userAgent = options.userAgent ?? "rec-grid-gateway"

  const attempt = (delivery: Delivery, body: string) =>
    WebhookUrls.resolveTarget(delivery.url, options, options.lookup).pipe(
      Effect.matchEffect({
        onFailure: (reason) =>
          // A name that does not resolve may resolve later; an unacceptable address will not.
          Effect.succeed<Attempt>(reason.includes("does not resolve") ? { _tag: "Retry", reason } : { _tag: "Stop", reason }),
        onSuccess: (target) => {
          const timestamp = Math.floor(Date.now() / 1000)
          return post(target, {
            "content-type": "application/json",
            "user-agent": userAgent,
            "x-rec-event": "grid.alert",
            "x-rec-delivery": delivery.id,
            "x-rec-signature": signature(delivery.secret, timestamp, body)
          }, body, timeoutMs)
        }
      })
    )

  /** Delivers with retries; never fails. */
  const deliver = (delivery: Delivery): Effect.Effect<DeliveryResult> =>
    Effect.gen(function*() {
      const body = JSON.stringify(delivery.body)
      let last = "not attempted"
      for (let n = 1; n <= options.maxAttempts; n++) {
        if (n > 1) yield* Effect.sleep(Duration.millis(backoff * 2 ** (n - 2)))
        const outcome = yield* attempt(delivery, body)
        if (outcome._tag === "Ok") return { _tag: "Delivered", status: outcome.status, attempts: n } as const
        last = outcome.reason
        yield* Effect.logWarning(`webhook attempt ${n} of ${options.maxAttempts} failed: ${outcome.reason}`).pipe(
          Effect.annotateLogs({ "webhook.delivery": delivery.id })
        )
        if (outcome._tag === "Stop") return { _tag: "Failed", reason: last, attempts: n } as const
      }
      return { _tag: "Failed", reason: last, attempts: options.maxAttempts } as const
    }).pipe(Effect.withSpan("Webhooks.deliver", { attributes: { "webhook.delivery": delivery.id } }))

  return { deliver } as const
}

export interface WebhooksService {
  readonly deliver: (delivery: Delivery) => Effect.Effect<DeliveryResult>
}

export class Webhooks extends Context.Tag("@rec/grid-gateway/Webhooks")<Webhooks, WebhooksService>() {
  /** From `WEBHOOK_*` (see `Config.ts`). */
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.map(Effect.zip(GridConfig.settings, WebhookUrls.Resolver), ([s, lookup]) => make({ ...s.webhooks, lookup }))
  )
}
