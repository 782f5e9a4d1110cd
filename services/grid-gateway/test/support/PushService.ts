/**
 * A browser's push service for the end-to-end test, on a random port of 127.0.0.1: it checks the
 * VAPID authorization (ES256 JWT verified with the key of its `k` parameter, `aud` this origin)
 * and decrypts the aes128gcm body with the subscriber's private key and auth secret, as the
 * push service and the browser would; what it received is kept.
 */
import * as Effect from "effect/Effect"
import ece from "http_ece"
import * as Jose from "jose"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Subscriber {
  readonly endpoint: string
  readonly keys: { readonly p256dh: string; readonly auth: string }
}

export interface Push {
  readonly title: string
  readonly body: string
  readonly data: Readonly<Record<string, unknown>>
}

export interface PushService {
  readonly origin: string
  readonly received: Array<Push>
  /** Pushes refused (bad VAPID or encryption), with why. */
  readonly refused: Array<string>
  readonly subscriber: () => Subscriber
}

const publicJwk = (point: Buffer): Jose.JWK => ({
  kty: "EC",
  crv: "P-256",
  x: point.subarray(1, 33).toString("base64url"),
  y: point.subarray(33).toString("base64url")
})

export const make = Effect.acquireRelease(
  Effect.async<PushService & { readonly server: http.Server }>((resume) => {
    const subscribers = new Map<string, { ecdh: crypto.ECDH; auth: string }>()
    const received: Array<Push> = []
    const refused: Array<string> = []
    let origin = ""

    const handle = async (request: http.IncomingMessage, body: Buffer): Promise<number> => {
      const subscriber = subscribers.get((request.url ?? "").replace(/^\/push\//, ""))
      if (subscriber === undefined) return 404
      const vapid = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(request.headers.authorization ?? "")
      if (vapid === null) return 401
      const key = await Jose.importJWK(publicJwk(Buffer.from(vapid[2]!, "base64url")), "ES256")
      await Jose.jwtVerify(vapid[1]!, key, { algorithms: ["ES256"], audience: origin })
      if (request.headers["content-encoding"] !== "aes128gcm") return 400
      const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: subscriber.ecdh, authSecret: subscriber.auth })
      received.push(JSON.parse(plain.toString("utf8")) as Push)
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
            response.writeHead(403).end()
          }
        )
      })
    })
    server.listen(0, "127.0.0.1", () => {
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resume(Effect.succeed({
        server,
        origin,
        received,
        refused,
        subscriber: () => {
          const id = crypto.randomUUID()
          const ecdh = crypto.createECDH("prime256v1")
          ecdh.generateKeys()
          const auth = crypto.randomBytes(16).toString("base64url")
          subscribers.set(id, { ecdh, auth })
          return { endpoint: `${origin}/push/${id}`, keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth } }
        }
      }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)
