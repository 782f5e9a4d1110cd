/**
 * The transport of `WebPush.send` (node:http with a keep-alive agent): a kept-alive connection
 * the push service closed before reading the next push is sent again once on a new connection;
 * a push service that does not answer within `WEBPUSH_TIMEOUT_SECONDS` is a `Retry`.
 * (Encryption and the VAPID JWT are verified end to end by `Delivery.test.ts`.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import webpush from "web-push"
import { Keys } from "../src/Keys.js"
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

const webPush = WebPush.Default.pipe(
  Layer.provide(Layer.succeed(Keys, Keys.make({
    vapid: { publicKey: vapid.publicKey, privateKey: Redacted.make(vapid.privateKey), subject: "mailto:ops@example.org", source: "environment" },
    clickSecret: Redacted.make("secret")
  } as unknown as Keys))),
  Layer.provide(Settings.layer),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
    ["WEBPUSH_ALLOWED_ENDPOINTS", "http://127.0.0.1:*"],
    ["WEBPUSH_TIMEOUT_SECONDS", "0.5"]
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

describe("web push transport", () => {
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
    }).pipe(Effect.provide(webPush)))

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
    }).pipe(Effect.provide(webPush)))
})
