/**
 * The transport of `WebPush.send` (node:http with a keep-alive agent), in the service's thread
 * (`NUDGING_PUSH_WORKERS=0`) and in a push worker thread (the default, 1; the worker runs the
 * build's `dist/PushWorker.js`): a kept-alive connection the push service closed before reading
 * the next push is sent again once on a new connection; a push service that does not answer
 * within `WEBPUSH_TIMEOUT_SECONDS` is a `Retry`; pushes handed over together all get their own
 * answer. (Encryption and the VAPID JWT are verified end to end by `Delivery.test.ts`.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import webpush from "web-push"
import { Keys } from "../src/Keys.js"
import { type PushPool, startPool } from "../src/PushPool.js"
import type { TransportResult } from "../src/PushTransport.js"
import { Settings } from "../src/Settings.js"
import { WebPush } from "../src/WebPush.js"

const vapid = webpush.generateVAPIDKeys()
const ecdh = crypto.createECDH("prime256v1")
ecdh.generateKeys()
const target = (origin: string) => ({
  endpoint: `${origin}/push/1`,
  p256dh: ecdh.getPublicKey().toString("base64url"),
  auth: crypto.randomBytes(16).toString("base64url")
})
const payload = { title: "t", body: "b", data: { url: "/" } }
/** The span of a request that came in with a `traceparent`. */
const incoming = Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true })

const webPush = (workers: string, timeoutSeconds = "0.5") =>
  WebPush.Default.pipe(
    Layer.provide(Layer.succeed(Keys, Keys.make({
      vapid: { publicKey: vapid.publicKey, privateKey: Redacted.make(vapid.privateKey), subject: "mailto:ops@example.org", source: "environment" },
      clickSecret: Redacted.make("secret")
    } as unknown as Keys))),
    Layer.provide(Settings.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
      ["WEBPUSH_ALLOWED_ENDPOINTS", "http://127.0.0.1:*"],
      ["WEBPUSH_TIMEOUT_SECONDS", timeoutSeconds],
      ["NUDGING_PUSH_WORKERS", workers]
    ]))))
  )

/** A push service on a random port; `handle` decides per request. */
const server = (handle: (request: http.IncomingMessage, response: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<http.Server>((resume) => {
      const s = http.createServer(handle)
      s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
    }),
    (s) => Effect.sync(() => s.close()).pipe(Effect.zipRight(Effect.sync(() => s.closeAllConnections())))
  ).pipe(Effect.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`))

describe.each([["in the service's thread", "0"], ["in a worker thread", "1"]])("web push transport %s", (_, workers) => {
  it.scoped("a kept-alive connection closed by the push service is not a failure: the push goes again on a new one", () =>
    Effect.gen(function*() {
      let requests = 0
      const served = new WeakSet<object>()
      const origin = yield* server((request, response) => {
        requests++
        // The second push on a connection: the push service had closed it (its idle timeout).
        if (served.has(request.socket)) {
          request.socket.destroy()
          return
        }
        served.add(request.socket)
        request.resume()
        request.on("end", () => response.writeHead(201).end())
      })
      const push = yield* WebPush
      expect(yield* push.send(target(origin), payload, "info")).toEqual({ _tag: "Delivered", status: 201 })
      expect(yield* push.send(target(origin), payload, "info")).toEqual({ _tag: "Delivered", status: 201 })
      expect(requests).toBe(3)
    }).pipe(Effect.provide(webPush(workers))))

  it.scoped("no answer within the timeout is a retry; an answer with Retry-After is kept", () =>
    Effect.gen(function*() {
      const origin = yield* server((request, response) => {
        if (request.url === "/push/busy") {
          response.writeHead(429, { "retry-after": "120" }).end("slow down")
          return
        }
        request.resume()
      })
      const push = yield* WebPush
      const silent = yield* push.send(target(origin), payload, "info")
      expect(silent._tag).toBe("Retry")
      expect(silent._tag === "Retry" && silent.message).toMatch(/did not answer within/)
      const busy = yield* push.send({ ...target(origin), endpoint: `${origin}/push/busy` }, payload, "info")
      expect(busy._tag).toBe("Retry")
      expect(busy._tag === "Retry" && busy.message).toBe("push service answered 429: slow down")
      expect(busy._tag === "Retry" && busy.retryAfter !== undefined).toBe(true)
    }).pipe(Effect.provide(webPush(workers))))

  it.scoped("pushes handed over together each get their own answer, the traceparent included", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const origin = yield* server((request, response) => {
        seen.push(request.headers["traceparent"] as string | undefined)
        request.resume()
        const status = request.url === "/push/gone" ? 410 : 201
        request.on("end", () => response.writeHead(status).end())
      })
      const push = yield* WebPush
      const results = yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => (i % 10 === 9 ? { ...target(origin), endpoint: `${origin}/push/gone` } : target(origin))),
        (t) => push.send(t, payload, "info"),
        { concurrency: "unbounded" }
      ).pipe(Effect.withSpan("caller"), Effect.withParentSpan(incoming))
      expect(results.filter((r) => r._tag !== "Delivered" && r._tag !== "Gone")).toEqual([])
      expect(results.filter((r) => r._tag === "Delivered")).toHaveLength(36)
      expect(results.filter((r) => r._tag === "Gone").map((r) => r._tag === "Gone" && r.status)).toEqual([410, 410, 410, 410])
      expect(seen).toHaveLength(40)
      // Tracing is off here: the trace the caller's request came with is passed on.
      expect(seen.every((h) => h === `00-${incoming.traceId}-${incoming.spanId}-01`)).toBe(true)
      const rejected = yield* push.send({ ...target(origin), endpoint: "https://push.example.org/1" }, payload, "info")
      expect(rejected).toEqual({ _tag: "Rejected", message: "the endpoint is not an allowed push service (WEBPUSH_ALLOWED_ENDPOINTS)" })
    }).pipe(Effect.provide(webPush(workers, "20"))))
})

describe("push worker threads at shutdown", () => {
  const options = (origin: string) => ({
    vapid: { subject: "mailto:ops@example.org", publicKey: vapid.publicKey, privateKey: vapid.privateKey },
    ttlSeconds: 60,
    timeoutMillis: 10_000,
    endpoints: [origin.replace(/:\d+$/, ":*")]
  })
  const sendNow = (pool: PushPool, t: ReturnType<typeof target>) =>
    new Promise<TransportResult>((resolve) => pool.send({ target: t, payload, urgency: "low", traceparent: undefined }, resolve))

  it.scopedLive("the pushes in flight finish before the threads stop; past the wait they are retries", () =>
    Effect.gen(function*() {
      const origin = yield* server((request, response) => {
        request.resume()
        if (request.url === "/push/slow") request.on("end", () => setTimeout(() => response.writeHead(201).end(), 300))
      })
      const pool = startPool(2, options(origin))
      const slow = sendNow(pool, { ...target(origin), endpoint: `${origin}/push/slow` })
      yield* Effect.sleep("50 millis")
      yield* Effect.promise(() => pool.close(5_000))
      expect(yield* Effect.promise(() => slow)).toEqual({ _tag: "Delivered", status: 201 })
      expect(yield* Effect.promise(() => sendNow(pool, target(origin)))).toEqual({
        _tag: "Retry",
        message: "the service is stopping",
        retryAfterMillis: undefined
      })

      const other = startPool(1, options(origin))
      const silent = sendNow(other, { ...target(origin), endpoint: `${origin}/push/silent` })
      yield* Effect.sleep("50 millis")
      yield* Effect.promise(() => other.close(100))
      expect(yield* Effect.promise(() => silent)).toEqual({
        _tag: "Retry",
        message: "the service stopped before the push service answered",
        retryAfterMillis: undefined
      })
    }))
})
