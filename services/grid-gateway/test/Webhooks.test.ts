/**
 * Webhook deliveries (issue 14 point 5): the signed POST goes to the address that was checked
 * (not to whatever a second DNS answer says), the URL is checked again at delivery, 5xx/408/429
 * and timeouts are retried a bounded number of times with backoff, other answers and redirects
 * end the delivery.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Webhooks from "../src/Webhooks.js"
import type * as WebhookUrls from "../src/WebhookUrls.js"

interface Hit {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A local receiver answering with `answers` in turn (the last one repeats); "silent" never answers. */
const receiver = (answers: ReadonlyArray<number | "silent" | "redirect">) =>
  Effect.acquireRelease(
    Effect.async<{ port: number; hits: Array<Hit>; server: http.Server }>((resume) => {
      const hits: Array<Hit> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.on("data", (c: Buffer) => (body += c.toString()))
        request.on("end", () => {
          hits.push({ headers: request.headers, body })
          const answer = answers[Math.min(hits.length - 1, answers.length - 1)]!
          if (answer === "silent") return
          if (answer === "redirect") {
            response.writeHead(302, { location: "http://127.0.0.1:9/elsewhere" })
            return response.end()
          }
          response.writeHead(answer)
          response.end("ignored")
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ port: (server.address() as AddressInfo).port, hits, server })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const names = (table: Record<string, Array<string>>): WebhookUrls.Lookup => async (host) => {
  const addresses = table[host]
  if (addresses === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
  return addresses.map((address) => ({ address, family: 4 }))
}

const options = (lookup: WebhookUrls.Lookup, overrides: Partial<Webhooks.WebhookOptions> = {}) =>
  Webhooks.make({
    allowHttp: true,
    allowPrivate: true,
    timeout: Duration.millis(400),
    maxAttempts: 3,
    backoff: Duration.millis(20),
    lookup,
    ...overrides
  })

const delivery = (port: number, host = "hooks.test") => ({
  url: `http://${host}:${port}/grid`,
  secret: "whsec_test",
  id: "rule-1:run-1",
  body: { type: "grid.alert", rule_id: "rule-1" }
})

describe("webhook delivery", () => {
  it.live("connects to the checked address with the URL's host name; signed; delivered on 2xx", () =>
    Effect.gen(function*() {
      const server = yield* receiver([204])
      // hooks.test exists only in this table: the request can only have gone to the address checked.
      const webhooks = options(names({ "hooks.test": ["127.0.0.1"] }))
      const result = yield* webhooks.deliver(delivery(server.port))
      expect(result).toEqual({ _tag: "Delivered", status: 204, attempts: 1 })
      const [hit] = server.hits
      expect(hit!.headers.host).toBe(`hooks.test:${server.port}`)
      expect(hit!.headers["x-rec-delivery"]).toBe("rule-1:run-1")
      expect(hit!.headers["x-rec-event"]).toBe("grid.alert")
      expect(hit!.body).toBe(JSON.stringify({ type: "grid.alert", rule_id: "rule-1" }))
      expect(Webhooks.verify("whsec_test", hit!.headers["x-rec-signature"] as string, hit!.body, Math.floor(Date.now() / 1000)))
        .toBe(true)
    }).pipe(Effect.scoped))

  it.live("checked again at delivery: a name that now resolves to a private address is not called", () =>
    Effect.gen(function*() {
      const server = yield* receiver([204])
      const webhooks = options(names({ "hooks.test": ["127.0.0.1"] }), { allowPrivate: false })
      const result = yield* webhooks.deliver(delivery(server.port))
      expect(result).toEqual({ _tag: "Failed", reason: "host hooks.test resolves to a loopback address (127.0.0.1)", attempts: 1 })
      expect(server.hits).toEqual([])
    }).pipe(Effect.scoped))

  it.live("5xx, 408 and 429 are retried with backoff up to the limit; each attempt signed anew", () =>
    Effect.gen(function*() {
      const server = yield* receiver([503, 429, 200])
      const result = yield* options(names({ "hooks.test": ["127.0.0.1"] })).deliver(delivery(server.port))
      expect(result).toEqual({ _tag: "Delivered", status: 200, attempts: 3 })
      expect(server.hits.map((h) => h.headers["x-rec-delivery"])).toEqual(["rule-1:run-1", "rule-1:run-1", "rule-1:run-1"])
      const failing = yield* receiver([500])
      const failed = yield* options(names({ "hooks.test": ["127.0.0.1"] }), { maxAttempts: 2 }).deliver(delivery(failing.port))
      expect(failed).toEqual({ _tag: "Failed", reason: "the webhook answered 500", attempts: 2 })
      expect(failing.hits).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("no answer within WEBHOOK_TIMEOUT_SECONDS counts as a failed attempt", () =>
    Effect.gen(function*() {
      const server = yield* receiver(["silent"])
      const started = Date.now()
      const result = yield* options(names({ "hooks.test": ["127.0.0.1"] }), { maxAttempts: 2 }).deliver(delivery(server.port))
      expect(result).toMatchObject({ _tag: "Failed", attempts: 2 })
      expect(result._tag === "Failed" && result.reason).toMatch(/no answer within 400 ms/)
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(server.hits).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("other 4xx and redirects end the delivery at once; redirects are not followed", () =>
    Effect.gen(function*() {
      const gone = yield* receiver([410])
      expect(yield* options(names({ "hooks.test": ["127.0.0.1"] })).deliver(delivery(gone.port)))
        .toEqual({ _tag: "Failed", reason: "the webhook answered 410", attempts: 1 })
      const moved = yield* receiver(["redirect"])
      expect(yield* options(names({ "hooks.test": ["127.0.0.1"] })).deliver(delivery(moved.port)))
        .toEqual({ _tag: "Failed", reason: "the webhook answered 302", attempts: 1 })
      expect(moved.hits).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a name that does not resolve is tried again; an unreachable address too", () =>
    Effect.gen(function*() {
      const result = yield* options(names({}), { maxAttempts: 2 }).deliver(delivery(1, "nowhere.test"))
      expect(result).toMatchObject({ _tag: "Failed", reason: "host nowhere.test does not resolve (ENOTFOUND)", attempts: 2 })
      const refused = yield* options(names({ "hooks.test": ["127.0.0.1"] }), { maxAttempts: 2 }).deliver(delivery(9))
      expect(refused).toMatchObject({ _tag: "Failed", attempts: 2 })
      expect(refused._tag === "Failed" && refused.reason).toMatch(/^the webhook could not be reached: .*ECONNREFUSED/)
    }).pipe(Effect.scoped))
})
