/**
 * The alert flow end to end (issue 14 point 7), with every part real: a pipeline-completed
 * message published on the broker (the embedded one, then the machine's Mosquitto) reaches the
 * gateway's listener; the gateway reads the digital-twin simulator, claims the breached rule and
 * sends its nudge to the nudging service (`@rec/nudging-service`'s `Http.makeTest`, its typed
 * client, the gateway's client-credentials token with `nudging.ingest`), which accepts it and
 * delivers a web push that a local push service verifies (VAPID) and decrypts; the owner's
 * webhook receives the signed POST. A redelivered message sends nothing new.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { ClientCredentials, TokenVerifier } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp } from "@rec/dev-idp"
import { AlertNudges } from "@rec/grid-gateway-service"
import { Api as NudgingApi, Http as Nudging, migrations as nudgingMigrations } from "@rec/nudging-service"
import { OutboundHttp } from "@rec/platform"
import { Engines } from "@rec/policy"
import { describe, expect, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import mqtt from "mqtt"
import * as crypto from "node:crypto"
import * as Webhooks from "../src/Webhooks.js"
import { breachDay, publishRun, runEvent, runReports, waitFor, webhookReceiver } from "./support/Alerts.js"
import { type BrokerChoice, call, gatewayLayer, repoPolicies, tokenOf } from "./support/Gateway.js"
import * as PushService from "./support/PushService.js"

// ---------------------------------------------------------------------------------------------
// The nudging service and the push service, as parts of the test

class Push extends Context.Tag("test/Push")<Push, PushService.PushService>() {
  static readonly layer = Layer.scoped(Push, PushService.make)
}

/** Where the nudging service listens (its own server, next to the gateway's). */
class NudgingUrl extends Context.Tag("test/NudgingUrl")<NudgingUrl, string>() {}

const addressOf = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

const nudgingService = Layer.unwrapEffect(Effect.gen(function*() {
  const idp = yield* DevIdp
  const push = yield* Push
  const env = {
    WEBPUSH_ALLOWED_ENDPOINTS: `${push.origin.replace(/:\d+$/, "")}:*`,
    NUDGING_DELIVERY_POLL_SECONDS: "0.2",
    NUDGING_DELIVERY_RETRY_BASE_SECONDS: "0.2",
    NUDGING_DELIVERY_RETRY_MAX_SECONDS: "1",
    SCHEDULER_POLL_SECONDS: "3600",
    LOG_LEVEL: "warn"
  }
  return Layer.effect(NudgingUrl, addressOf).pipe(
    Layer.provide(Nudging.makeTest({
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      verifier: TokenVerifier.layerFor(idp.issuer, { algorithms: ["RS256"], audience: [idp.audience] }),
      database: Testing.layerPglite({ service: "nudging", migrations: nudgingMigrations })
    })),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
}))

/** The gateway's nudge sender: the real one, aimed at the nudging service, as svc-grid with nudging.ingest. */
const realNudges = Layer.effect(
  AlertNudges.AlertNudges,
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const tokens = yield* ClientCredentials.make({
      issuer: Option.some(idp.issuer),
      tokenEndpoint: Option.none(),
      clientId: "svc-grid",
      clientSecret: Redacted.make("dev-only-secret-svc-grid"),
      scope: Option.some("nudging.ingest")
    })
    return yield* AlertNudges.make({ baseUrl: yield* NudgingUrl, tokens, timeout: Duration.seconds(10) })
  })
).pipe(Layer.provide(OutboundHttp.layer))

const endToEnd = (broker: BrokerChoice) =>
  gatewayLayer({
    broker,
    nudges: realNudges,
    env: { WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_ALLOW_PRIVATE: "true" }
  }).pipe(
    Layer.provideMerge(nudgingService),
    Layer.provideMerge(Push.layer),
    Layer.provideMerge(DevIdp.layerTest)
  )

// ---------------------------------------------------------------------------------------------
// The flow

const flow = Effect.gen(function*() {
  const push = yield* Push
  const idp = yield* DevIdp
  const owner = idp.identities.users.get("dso-operator")!.id
  const operator = yield* tokenOf("dso-operator")

  // The operator's browser subscribes to web push at the nudging service.
  const nudging = yield* HttpApiClient.make(NudgingApi, { baseUrl: yield* NudgingUrl }).pipe(Effect.provide(FetchHttpClient.layer))
  const browser = push.subscriber()
  yield* nudging.webpush.subscribe({ payload: { user_id: owner, community_id: null, subscription: browser } }).pipe(
    Effect.provide(FetchHttpClient.layer),
    Effect.provideService(FetchHttpClient.RequestInit, { headers: { authorization: `Bearer ${operator}` } }),
    Effect.orDie
  )

  // A webhook, and a rule without recipients: the nudge is for the owner, as a web notification.
  const hook = yield* webhookReceiver()
  const settings = yield* call("PUT", "/api/notification-settings", { token: operator, json: { webhook_url: hook.url } })
  const secret = settings.body.webhook_secret as string
  const hot = yield* breachDay("dso-alto-garda")
  const created = yield* call("POST", "/api/alert-rules", { token: operator, json: { risk_types: hot.warning, threshold: "WARNING" } })
  expect(created.status).toBe(201)
  const rule = created.body as { id: string }

  const event = runEvent({ network_id: "dso-alto-garda", period: hot.date, window_start: "15:00", window_end: "19:00" })
  yield* publishRun(event)
  yield* waitFor("the run's report", () => runReports(event.run_id).length === 1, "20 seconds")
  const report = runReports(event.run_id)[0]!
  expect(report.fields["alerts.outcomes"]).toEqual([`${rule.id}:sent`])

  // The web push arrived, verified and decrypted at the push service.
  yield* waitFor("the web push", () => push.received.length === 1, "20 seconds")
  expect(push.refused).toEqual([])
  const [notification] = push.received
  const hazard = hot.warning.length === 2 ? "Wind and heat" : hot.warning[0] === "wind" ? "Strong wind" : "Extreme heat"
  expect(notification!.title).toContain(hazard)
  expect(notification!.body).toContain(`(${hot.date}) between 15:00 and 19:00`)
  expect(notification!.data).toMatchObject({ rule_id: "extr_event" })

  // The webhook, signed with the secret answered once.
  yield* waitFor("the webhook", () => hook.received.length === 1)
  const [delivery] = hook.received
  expect(Webhooks.verify(secret, delivery!.headers["x-rec-signature"] as string, delivery!.body, Math.floor(Date.now() / 1000)))
    .toBe(true)
  expect(JSON.parse(delivery!.body)).toMatchObject({
    type: "grid.alert",
    rule_id: rule.id,
    run_id: event.run_id,
    network_id: "dso-alto-garda",
    period: hot.date,
    window_start: "15:00",
    window_end: "19:00",
    hazards: hot.warning
  })

  // The same message again (QoS 1 redelivery): nothing new is sent, by the gateway's own claim.
  yield* publishRun(event)
  yield* waitFor("the redelivery's report", () => runReports(event.run_id).length === 2)
  expect(runReports(event.run_id)[1]!.fields["alerts.outcomes"]).toEqual([`${rule.id}:already-handled`])
  yield* Effect.sleep("1500 millis")
  expect(push.received).toHaveLength(1)
  expect(hook.received).toHaveLength(1)

  yield* call("DELETE", `/api/alert-rules/${rule.id}`, { token: operator })
  yield* call("PUT", "/api/notification-settings", { token: operator, json: { webhook_url: null } })
}).pipe(Effect.scoped)

layer(endToEnd({ _tag: "embedded" }), { excludeTestServices: true, timeout: "180 seconds" })("end to end, embedded broker", (it) => {
  it.effect("pipeline run -> gateway -> nudging service -> web push decrypted; webhook signed; redelivery sends nothing", () => flow)
})

const mosquittoSkip = await new Promise<string | undefined>((resolve) => {
  const client = mqtt.connect({ host: "127.0.0.1", port: 1883, reconnectPeriod: 0, connectTimeout: 2000 })
  client.on("connect", () => {
    client.end(true)
    resolve(undefined)
  })
  client.on("error", (e) => {
    client.end(true)
    resolve(`Mosquitto at 127.0.0.1:1883 is not reachable (${e.message})`)
  })
})
if (mosquittoSkip !== undefined && Testing.servicesRequired()) throw new Error(`${mosquittoSkip} (REC_REQUIRE_SERVICES=1)`)

describe.skipIf(mosquittoSkip !== undefined)(`end to end on Mosquitto${mosquittoSkip === undefined ? "" : ` (skipped: ${mosquittoSkip})`}`, () => {
  layer(
    endToEnd({ _tag: "mosquitto", topicPrefix: `rec-test/${crypto.randomBytes(6).toString("hex")}/` }),
    { excludeTestServices: true, timeout: "180 seconds" }
  )("end to end, Mosquitto", (it) => {
    it.effect("pipeline run -> gateway -> nudging service -> web push decrypted; webhook signed; redelivery sends nothing", () => flow)
  })
})
