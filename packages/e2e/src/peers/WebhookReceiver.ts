/**
 * A webhook receiver that checks the grid gateway's signature as its README tells receivers to:
 * `X-REC-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, compared
 * in constant time, timestamps older than five minutes refused. The secret is only known after
 * the gateway answered it, so each delivery is kept with its raw body and checked by `verify`.
 */
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedWebhook {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export interface WebhookReceiver {
  readonly url: string
  readonly received: Array<ReceivedWebhook>
  readonly close: () => Promise<void>
}

/** Whether `delivery` carries a valid, fresh signature made with `secret`. */
export const verify = (secret: string, delivery: ReceivedWebhook, nowSeconds = Math.floor(Date.now() / 1000)): boolean => {
  const header = delivery.headers["x-rec-signature"]
  if (typeof header !== "string") return false
  const parts = new Map(header.split(",").map((part) => part.trim().split("=", 2) as [string, string]))
  const t = Number(parts.get("t"))
  const v1 = parts.get("v1") ?? ""
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300 || !/^[0-9a-f]{64}$/.test(v1)) return false
  const expected = crypto.createHmac("sha256", secret).update(`${t}.${delivery.body}`).digest()
  return crypto.timingSafeEqual(expected, Buffer.from(v1, "hex"))
}

export const start = (): Promise<WebhookReceiver> =>
  new Promise((resolve) => {
    const received: Array<ReceivedWebhook> = []
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (c: Buffer) => chunks.push(c))
      request.on("end", () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
        response.writeHead(204).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/grid`,
        received,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
