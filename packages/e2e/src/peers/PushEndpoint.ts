/**
 * A local push service standing in for a browser's push service and the browser itself: it
 * checks the VAPID JWT (ES256 with the key of the `k` parameter, `aud` its origin), decrypts the
 * aes128gcm body with the subscriber's private key and auth secret (`http_ece`), and keeps what
 * it received, with the `traceparent` header the sender propagated.
 */
import ece from "http_ece"
import * as Jose from "jose"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface PushSubscriptionJson {
  readonly endpoint: string
  readonly keys: { readonly p256dh: string; readonly auth: string }
}

export interface ReceivedPush {
  readonly subscriber: string
  readonly traceparent: string | undefined
  readonly payload: {
    readonly title: string
    readonly body: string
    readonly data: { readonly url: string; readonly notification_id?: string; readonly rule_id?: string }
  }
}

export interface PushEndpoint {
  readonly origin: string
  readonly received: Array<ReceivedPush>
  /** Requests refused before or while decrypting, with why (should stay empty). */
  readonly refused: Array<string>
  /** A new browser subscription, named `name` in `received`. */
  readonly subscribe: (name: string) => PushSubscriptionJson
  readonly close: () => Promise<void>
}

interface Subscriber {
  readonly ecdh: crypto.ECDH
  readonly auth: string
}

const publicJwk = (point: Buffer): Jose.JWK => ({
  kty: "EC",
  crv: "P-256",
  x: point.subarray(1, 33).toString("base64url"),
  y: point.subarray(33).toString("base64url")
})

export const start = (): Promise<PushEndpoint> =>
  new Promise((resolve) => {
    const subscribers = new Map<string, Subscriber>()
    const received: Array<ReceivedPush> = []
    const refused: Array<string> = []
    let origin = ""

    const handle = async (request: http.IncomingMessage, body: Buffer): Promise<number> => {
      const name = decodeURIComponent((request.url ?? "").replace(/^\/push\//, ""))
      const subscriber = subscribers.get(name)
      if (subscriber === undefined) return 404
      const vapid = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(request.headers.authorization ?? "")
      if (vapid === null) throw new Error("missing VAPID authorization")
      const key = await Jose.importJWK(publicJwk(Buffer.from(vapid[2]!, "base64url")), "ES256")
      await Jose.jwtVerify(vapid[1]!, key, { algorithms: ["ES256"], audience: origin })
      if (request.headers["content-encoding"] !== "aes128gcm") throw new Error("not aes128gcm")
      const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: subscriber.ecdh, authSecret: subscriber.auth })
      const traceparent = request.headers["traceparent"]
      received.push({
        subscriber: name,
        traceparent: typeof traceparent === "string" ? traceparent : undefined,
        payload: JSON.parse(plain.toString("utf8")) as ReceivedPush["payload"]
      })
      return 201
    }

    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (c: Buffer) => chunks.push(c))
      request.on("end", () => {
        handle(request, Buffer.concat(chunks)).then(
          (status) => response.writeHead(status).end(),
          (error: unknown) => {
            refused.push(error instanceof Error ? error.message : String(error))
            response.writeHead(400).end()
          }
        )
      })
    })
    server.listen(0, "127.0.0.1", () => {
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve({
        origin,
        received,
        refused,
        subscribe: (name) => {
          const ecdh = crypto.createECDH("prime256v1")
          ecdh.generateKeys()
          const auth = crypto.randomBytes(16).toString("base64url")
          subscribers.set(name, { ecdh, auth })
          return {
            endpoint: `${origin}/push/${encodeURIComponent(name)}`,
            keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth }
          }
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
