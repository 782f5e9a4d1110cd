/**
 * A push service for the tests, on a random port of 127.0.0.1, that does what a browser's push
 * service and the browser do with a push: checks the VAPID JWT (ES256 signature with the key of
 * the `k` parameter, `aud` the origin, `exp` within 24 hours, `sub` a mailto: or https: URL),
 * then decrypts the aes128gcm body with the subscriber's private key and auth secret (`http_ece`),
 * and keeps what it received. Each subscription can be told to answer something else (410, 500).
 */
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import ece from "http_ece"
import * as Jose from "jose"

export interface Subscriber {
  readonly id: string
  readonly endpoint: string
  readonly keys: { readonly p256dh: string; readonly auth: string }
  readonly ecdh: crypto.ECDH
  readonly auth: string
}

export interface Received {
  readonly subscriberId: string
  readonly headers: http.IncomingHttpHeaders
  readonly vapid: { readonly subject: string; readonly audience: string; readonly expiresIn: number; readonly publicKey: string }
  readonly payload: {
    readonly title: string
    readonly body: string
    readonly data: { readonly url: string; readonly notification_id?: string; readonly rule_id?: string; readonly click_token?: string }
  }
}

export interface PushService {
  readonly origin: string
  readonly received: Array<Received>
  /** Requests refused before decrypting (bad VAPID or encryption), with why. */
  readonly refused: Array<string>
  readonly subscriber: (id?: string) => Subscriber
  /** The statuses to answer for a subscriber, in turn (then 201). */
  readonly answer: (subscriberId: string, statuses: ReadonlyArray<number>) => void
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<Received>>
}

const parseVapid = (header: string | undefined) => {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? "")
  return match === null ? undefined : { token: match[1]!, key: match[2]! }
}

const publicJwk = (point: Buffer): Jose.JWK => ({
  kty: "EC",
  crv: "P-256",
  x: point.subarray(1, 33).toString("base64url"),
  y: point.subarray(33).toString("base64url")
})

export const make = Effect.acquireRelease(
  Effect.async<PushService & { readonly server: http.Server }>((resume) => {
    const subscribers = new Map<string, Subscriber>()
    const scripted = new Map<string, Array<number>>()
    const received: Array<Received> = []
    const refused: Array<string> = []
    const waiters: Array<() => void> = []
    let origin = ""

    const handle = async (request: http.IncomingMessage, body: Buffer): Promise<[number, string]> => {
      const id = decodeURIComponent((request.url ?? "").replace(/^\/push\//, ""))
      const subscriber = subscribers.get(id)
      if (subscriber === undefined) return [404, "unknown subscription"]
      const next = scripted.get(id)?.shift()
      if (next !== undefined && next !== 201) return [next, `scripted ${next}`]
      const vapid = parseVapid(request.headers.authorization)
      if (vapid === undefined) return [401, "missing vapid authorization"]
      let claims: Jose.JWTPayload
      try {
        const key = await Jose.importJWK(publicJwk(Buffer.from(vapid.key, "base64url")), "ES256")
        claims = (await Jose.jwtVerify(vapid.token, key, { algorithms: ["ES256"], audience: origin })).payload
      } catch (error) {
        return [403, `vapid: ${error instanceof Error ? error.message : String(error)}`]
      }
      const expiresIn = (claims.exp ?? 0) - Math.floor(Date.now() / 1000)
      if (expiresIn <= 0 || expiresIn > 24 * 3600) return [403, `vapid exp out of range: ${expiresIn}`]
      if (typeof claims.sub !== "string" || !/^(mailto:|https:)/.test(claims.sub)) return [403, "vapid sub missing"]
      if (request.headers["content-encoding"] !== "aes128gcm") return [400, "not aes128gcm"]
      let payload: Received["payload"]
      try {
        const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: subscriber.ecdh, authSecret: subscriber.auth })
        payload = JSON.parse(plain.toString("utf8")) as Received["payload"]
      } catch (error) {
        return [400, `cannot decrypt: ${error instanceof Error ? error.message : String(error)}`]
      }
      received.push({
        subscriberId: id,
        headers: request.headers,
        vapid: { subject: claims.sub, audience: String(claims.aud), expiresIn, publicKey: vapid.key },
        payload
      })
      for (const wake of waiters.splice(0)) wake()
      return [201, ""]
    }

    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (c: Buffer) => chunks.push(c))
      request.on("end", () => {
        void handle(request, Buffer.concat(chunks)).then(([status, text]) => {
          if (status >= 400 && !text.startsWith("scripted")) refused.push(`${status} ${text}`)
          response.writeHead(status, { "content-type": "text/plain" }).end(text)
        })
      })
    })
    server.listen(0, "127.0.0.1", () => {
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resume(Effect.succeed({
        server,
        origin,
        received,
        refused,
        subscriber: (id = crypto.randomUUID()) => {
          const ecdh = crypto.createECDH("prime256v1")
          ecdh.generateKeys()
          const auth = crypto.randomBytes(16).toString("base64url")
          const subscriber: Subscriber = {
            id,
            endpoint: `${origin}/push/${encodeURIComponent(id)}`,
            keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth },
            ecdh,
            auth
          }
          subscribers.set(id, subscriber)
          return subscriber
        },
        answer: (subscriberId, statuses) => {
          scripted.set(subscriberId, [...statuses])
        },
        waitFor: (count, timeoutMs = 10_000) =>
          new Promise((resolve, reject) => {
            const deadline = setTimeout(
              () => reject(new Error(`expected ${count} pushes, received ${received.length}; refused: ${refused.join("; ")}`)),
              timeoutMs
            )
            const check = () => {
              if (received.length >= count) {
                clearTimeout(deadline)
                resolve(received.slice())
              } else waiters.push(check)
            }
            check()
          })
      }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)
