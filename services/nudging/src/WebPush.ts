/**
 * Web push (RFC 8030/8291/8292) as the service's `send`: the push is encrypted, signed and sent by
 * `PushTransport.ts` (`web-push` for aes128gcm and the VAPID JWT, `node:http(s)` with keep-alive
 * agents), in `NUDGING_PUSH_WORKERS` worker threads (default 1; `PushPool.ts`), or in the
 * service's own thread when it is 0.
 *
 * Why threads: each push costs about 0.7 ms of CPU (a fresh ECDH key pair and agreement per
 * message, which RFC 8291 requires, AES-GCM, the HTTP exchange), and on the service's event loop
 * the ingests queued behind it; in a worker only the hand-off (one message per batch) stays here.
 * The `WebPush.send` span still wraps the whole push, and the `traceparent` sent is this span's
 * with tracing on, else the caller's incoming one (as the kit's outbound client does).
 */
import { Tracing } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Tracer from "effect/Tracer"
import type * as Domain from "./Domain.js"
import { Keys } from "./Keys.js"
import { startPool } from "./PushPool.js"
import { makeTransport, type PushPayload, type Target, type TransportOptions, type TransportResult, type Urgency } from "./PushTransport.js"
import { Settings } from "./Settings.js"

export { endpointAllowed, type PushPayload, type Target } from "./PushTransport.js"

export type SendResult =
  | { readonly _tag: "Delivered"; readonly status: number }
  | { readonly _tag: "Gone"; readonly status: number; readonly message: string }
  | { readonly _tag: "Retry"; readonly message: string; readonly retryAfter: Duration.Duration | undefined }
  | { readonly _tag: "Rejected"; readonly message: string }

/** The push worker threads could not be started (`NUDGING_PUSH_WORKERS`). */
export class PushWorkersUnavailable extends Schema.TaggedError<PushWorkersUnavailable>()("PushWorkersUnavailable", {
  message: Schema.String
}) {}

/** Urgency header (RFC 8030 5.3) of a notification's severity. */
export const urgencyOf = (severity: Domain.Severity): Urgency =>
  severity === "critical" ? "high" : severity === "warning" ? "normal" : "low"

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

const fromTransport = (result: TransportResult): SendResult =>
  result._tag === "Retry"
    ? { _tag: "Retry", message: result.message, retryAfter: result.retryAfterMillis === undefined ? undefined : Duration.millis(result.retryAfterMillis) }
    : result

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
    const timeoutMillis = Duration.toMillis(settings.pushTimeout)
    const options: TransportOptions = {
      vapid: { subject: keys.vapid.subject, publicKey: keys.vapid.publicKey, privateKey: Redacted.value(keys.vapid.privateKey) },
      ttlSeconds: settings.pushTtlSeconds,
      timeoutMillis,
      endpoints: settings.pushEndpoints
    }
    const sender = settings.pushWorkers === 0
      ? yield* Effect.acquireRelease(Effect.sync(() => makeTransport(options)), (transport) => Effect.sync(transport.close))
      : yield* Effect.acquireRelease(
        Effect.try({
          try: () => startPool(settings.pushWorkers, options),
          catch: (cause) => new PushWorkersUnavailable({ message: cause instanceof Error ? cause.message : String(cause) })
        }),
        // Pushes in flight finish (each bounded by the push timeout) before the threads stop.
        (pool) => Effect.promise(() => pool.close(timeoutMillis + 1000))
      )

    const send = (target: Target, payload: PushPayload, severity: Domain.Severity): Effect.Effect<SendResult> =>
      Effect.flatMap(Effect.option(Effect.currentSpan), (span) => {
        // With tracing on this span is exported: the push service's side joins it; off, the
        // caller's incoming trace is passed on (as the kit's outbound client does).
        const parent = span._tag === "None" ? undefined : tracing ? span.value : externalRoot(span.value)
        const request = { target, payload, urgency: urgencyOf(severity), traceparent: parent === undefined ? undefined : traceparentOf(parent) }
        return Effect.async<SendResult>((resume) => {
          const cancel = sender.send(request, (result) => resume(Effect.succeed(fromTransport(result))))
          // Interrupted: the request is destroyed (in whichever thread sends it).
          return Effect.sync(cancel)
        })
        // The call site is always this line: no stack captured per push.
      }).pipe(Effect.withSpan("WebPush.send", { captureStackTrace: false }))

    return { send, publicKey: keys.vapid.publicKey }
  })
}) {}
