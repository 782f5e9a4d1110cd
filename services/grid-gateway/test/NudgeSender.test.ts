/**
 * The real nudge sender (`AlertNudges.layer`) against an HTTP server speaking the nudging
 * service's ingest contract: the gateway's own client-credentials token with `NUDGING_SCOPE`,
 * the reference payload on `POST /ingest-event`, each answer of the contract read (dispatched,
 * suppressed, no rule, deduplicated are answers; refusals, 5xx and silence are failures naming
 * the nudging service and the operation).
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { AlertNudges, nudgeFor } from "../src/AlertNudges.js"

interface Received {
  readonly authorization: string | undefined
  readonly path: string
  readonly body: unknown
}

const received: Array<Received> = []
let answer: { status: number; body?: unknown } | "silent" = { status: 200 }

const outcome = { rule_id: "extr_event", outcome: "dispatched", reason: "sent", notification_id: "n-1", delivery_ids: [], duplicate_of: null }
const ingestAnswer = (result: string) => ({ result, event_type: "extr_event", user_id: "u", community_id: null, outcomes: [{ ...outcome, outcome: result }] })

const nudging = http.createServer((request, response) => {
  let text = ""
  request.on("data", (c: Buffer) => (text += c.toString()))
  request.on("end", () => {
    received.push({ authorization: request.headers.authorization, path: request.url ?? "", body: JSON.parse(text) })
    if (answer === "silent") return
    response.writeHead(answer.status, answer.body === undefined ? {} : { "content-type": "application/json" })
    response.end(answer.body === undefined ? undefined : JSON.stringify(answer.body))
  })
})
const url = await new Promise<string>((resolve) =>
  nudging.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(nudging.address() as AddressInfo).port}`)))
afterAll(() => {
  nudging.closeAllConnections()
  nudging.close()
})

const sender = Layer.unwrapEffect(Effect.map(DevIdp, (idp) =>
  AlertNudges.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
    ["NUDGING_API_URL", url],
    ["NUDGING_SCOPE", "nudging.ingest"],
    // Long enough for a loaded machine (the first send also fetches the token); the silent case waits it out.
    ["NUDGING_TIMEOUT", "2 seconds"],
    ["PLATFORM_OIDC_BASE_URL", idp.issuer],
    ["PLATFORM_OIDC_CLIENT_ID", "svc-grid"],
    ["PLATFORM_OIDC_CLIENT_SECRET", "dev-only-secret-svc-grid"]
  ])))))))

const nudge = nudgeFor({
  owner: "sub-1",
  recipients: ["ops@dso.example"],
  breached: ["wind"],
  period: "2026-08-17",
  runDay: "2026-08-17",
  windowStart: "00:00",
  windowEnd: "23:59"
})

layer(sender.pipe(Layer.provideMerge(DevIdp.layerTest)), { excludeTestServices: true, timeout: "60 seconds" })("the nudge sender", (it) => {
  it.effect("posts the reference payload with the gateway's token (nudging.ingest) and reads each answer", () =>
    Effect.gen(function*() {
      const nudges = yield* AlertNudges
      const idp = yield* DevIdp
      answer = { status: 200, body: ingestAnswer("dispatched") }
      expect(yield* nudges.send(nudge)).toEqual({ outcome: "dispatched" })
      const first = received[received.length - 1]!
      expect(first.path).toBe("/ingest-event")
      expect(first.body).toEqual(nudge)
      const claims = yield* idp.verify(first.authorization!.replace(/^Bearer /, ""))
      expect(claims).toMatchObject({ client_id: "svc-grid", scope: "nudging.ingest" })
      answer = { status: 202, body: ingestAnswer("suppressed") }
      expect(yield* nudges.send(nudge)).toEqual({ outcome: "suppressed" })
      answer = { status: 204 }
      expect(yield* nudges.send(nudge)).toEqual({ outcome: "no_rule_fired" })
      answer = { status: 409, body: { detail: "Already notified today", ...ingestAnswer("deduplicated") } }
      expect(yield* nudges.send(nudge)).toEqual({ outcome: "deduplicated" })
      // The token was asked for once and reused.
      expect(new Set(received.map((r) => r.authorization)).size).toBe(1)
    }))

  it.effect("refusals, failures and silence are failures naming the nudging service and ingest_event", () =>
    Effect.gen(function*() {
      const nudges = yield* AlertNudges
      const failure = (effect: Effect.Effect<unknown, { readonly status: number; readonly detail: string }>) =>
        Effect.map(Effect.flip(effect), (f) => ({ status: f.status, detail: f.detail }))
      answer = { status: 422, body: { detail: "facts.window_start is missing", issues: [], ...ingestAnswer("invalid_facts") } }
      expect(yield* failure(nudges.send(nudge))).toEqual({
        status: 422,
        detail: "Nudging service refused ingest_event: facts.window_start is missing"
      })
      answer = { status: 500, body: { detail: "boom" } }
      expect(yield* failure(nudges.send(nudge))).toEqual({ status: 502, detail: "Nudging service failed ingest_event (status 500): boom" })
      answer = "silent"
      expect(yield* failure(nudges.send(nudge))).toEqual({ status: 504, detail: "Nudging service did not answer ingest_event within 2s" })
    }))
})
