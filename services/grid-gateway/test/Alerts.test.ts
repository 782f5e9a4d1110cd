/**
 * Alerts that really fire (issue 14 points 5 and 7), with the nudge sender faked: a
 * pipeline-completed message on the broker (embedded aedes here; Mosquitto in
 * `AlertsMosquitto.test.ts`) makes every breached active rule of the network send one nudge with
 * the reference's payload and, when its owner set one, one webhook POST with a valid signature;
 * a redelivered message sends nothing new; other flows and statuses are ignored; a failed nudge
 * is retried by a redelivery without sending the webhook again.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import * as Webhooks from "../src/Webhooks.js"
import { breachDay, publishRun, quietDay, runEvent, runReports, waitFor, webhookReceiver } from "./support/Alerts.js"
import { call, gatewayLayer, SentNudges, tokenOf } from "./support/Gateway.js"

const env = { WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_MAX_ATTEMPTS: "2" }

const alto = "29f9d00f-a686-482e-b4bd-7b84e56869c1"

const createRule = (name: string, body: Record<string, unknown>) =>
  Effect.flatMap(tokenOf(name), (token) =>
    Effect.map(call("POST", "/api/alert-rules", { token, json: body }), (r) => {
      expect(r.status).toBe(201)
      return r.body as { id: string }
    }))

/** The outcome per rule of the dispatcher's last report of a run. */
const outcomes = (runId: string) => {
  const reports = runReports(runId)
  const last = reports[reports.length - 1]
  return Object.fromEntries(
    ((last?.fields["alerts.outcomes"] ?? []) as Array<string>).map((o) => o.split(":") as [string, string])
  )
}

layer(gatewayLayer({ env }), { excludeTestServices: true, timeout: "120 seconds" })("alert flow (embedded broker)", (it) => {
  it.effect("breached rules nudge and call the webhook once; a redelivered message sends nothing new", () =>
    Effect.gen(function*() {
      const hot = yield* breachDay("dso-alto-garda")
      const hook = yield* webhookReceiver()
      const token = yield* tokenOf("dso-operator")
      const settings = yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: hook.url } })
      const secret = settings.body.webhook_secret as string

      const withRecipients = yield* createRule("dso-operator", {
        risk_types: ["wind", "heat"],
        threshold: "WARNING",
        recipients: "Ops@dso.example, night@dso.example"
      })
      const toOwner = yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING" })
      const inactive = yield* createRule("dso-operator", { risk_types: ["wind", "heat"], threshold: "WARNING", active: false })
      const otherNetwork = yield* createRule("dso-operator-valsugana", { risk_types: ["wind", "heat"], threshold: "WARNING" })

      const event = runEvent({ network_id: "dso-alto-garda", period: hot.date, window_start: "14:00", window_end: "18:00" })
      yield* publishRun(event)
      const recorder = yield* SentNudges
      yield* waitFor("the run's report", () => runReports(event.run_id).length === 1)
      expect(outcomes(event.run_id)).toEqual({ [withRecipients.id]: "sent", [toOwner.id]: "sent" })

      const facts = {
        facts_version: "1.0",
        scenario: "extr_event",
        period: hot.date,
        window_start: "14:00",
        window_end: "18:00",
        event_type: hot.warning.length === 2 ? "thunderstorm" : hot.warning[0],
        day_label: hot.date === event.timestamp.slice(0, 10) ? "today" : expect.any(String)
      }
      expect(recorder.sent).toHaveLength(2)
      expect(recorder.sent).toContainEqual({
        event_type: "extr_event",
        user_id: `email-ingest:${crypto.createHash("sha256").update("night@dso.example|ops@dso.example").digest("hex").slice(0, 16)}`,
        facts: { ...facts, email_recipients: ["Ops@dso.example", "night@dso.example"] }
      })
      expect(recorder.sent).toContainEqual({ event_type: "extr_event", user_id: alto, facts: { ...facts, email_recipients: [] } })

      // One webhook per breached rule of the owner who set it, signed with the secret shown once.
      yield* waitFor("two webhook calls", () => hook.received.length === 2)
      for (const received of hook.received) {
        expect(received.headers["content-type"]).toBe("application/json")
        const signature = received.headers["x-rec-signature"] as string
        expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
        expect(Webhooks.verify(secret, signature, received.body, Math.floor(Date.now() / 1000))).toBe(true)
        expect(Webhooks.verify("whsec_wrong", signature, received.body, Math.floor(Date.now() / 1000))).toBe(false)
        const body = JSON.parse(received.body)
        expect(body).toMatchObject({
          type: "grid.alert",
          network_id: "dso-alto-garda",
          run_id: event.run_id,
          flow: "grid-resilience-flow",
          period: hot.date,
          window_start: "14:00",
          window_end: "18:00",
          threshold: "WARNING",
          hazards: hot.warning
        })
        expect(received.headers["x-rec-delivery"]).toBe(body.delivery_id)
        expect(body.delivery_id).toBe(`${body.rule_id}:${event.run_id}`)
        for (const hazard of hot.warning) {
          const levels = body.levels[hazard] as Record<string, number>
          expect((levels["WARNING"] ?? 0) + (levels["ALERT"] ?? 0)).toBeGreaterThan(0)
        }
      }
      expect(hook.received.map((r) => JSON.parse(r.body).rule_id).sort()).toEqual([withRecipients.id, toOwner.id].sort())
      expect([inactive.id, otherNetwork.id].some((id) => JSON.stringify(recorder.sent).includes(id))).toBe(false)

      // The broker delivers the same message again (QoS 1 is at least once): nothing new is sent.
      yield* publishRun(event)
      yield* waitFor("the redelivery's report", () => runReports(event.run_id).length === 2)
      expect(outcomes(event.run_id)).toEqual({ [withRecipients.id]: "already-handled", [toOwner.id]: "already-handled" })
      yield* Effect.sleep("300 millis")
      expect(recorder.sent).toHaveLength(2)
      expect(hook.received).toHaveLength(2)

      // Clean up for the next tests.
      for (const id of [withRecipients.id, toOwner.id, inactive.id]) yield* call("DELETE", `/api/alert-rules/${id}`, { token })
      yield* call("DELETE", `/api/alert-rules/${otherNetwork.id}`, { token: yield* tokenOf("dso-operator-valsugana") })
      yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: null } })
    }).pipe(Effect.scoped))

  it.effect("other flows, other statuses and quiet days send nothing; without network_id every network with rules is judged", () =>
    Effect.gen(function*() {
      const recorder = yield* SentNudges
      const before = recorder.sent.length
      const rule = yield* createRule("dso-operator-valsugana", { risk_types: ["heat"], threshold: "ALERT" })
      const hot = yield* breachDay("dso-valsugana")
      const otherFlow = runEvent({ flow: "meter-ingest-flow", period: hot.date })
      const failed = runEvent({ status: "failed", period: hot.date })
      const started = runEvent({ status: "started", period: hot.date })
      yield* publishRun(otherFlow)
      yield* publishRun(failed)
      yield* publishRun(started)
      // Not even JSON, or not a run event: dropped, and the listener goes on.
      yield* publishRun({ hello: "world" })
      const quiet = runEvent({ period: quietDay })
      yield* publishRun(quiet)
      yield* waitFor("the quiet run's report", () => runReports(quiet.run_id).length === 1)
      const report = runReports(quiet.run_id)[0]!
      expect(report.fields["alerts.networks"]).toEqual(["dso-valsugana"])
      expect(outcomes(quiet.run_id)).toEqual({ [rule.id]: "not-breached" })
      for (const ignored of [otherFlow, failed, started]) expect(runReports(ignored.run_id)).toEqual([])
      expect(recorder.sent.length).toBe(before)
      // The period defaults to the day of the event's timestamp (today, inside the window).
      const today = runEvent({ network_id: "dso-valsugana" })
      yield* publishRun(today)
      yield* waitFor("today's report", () => runReports(today.run_id).length === 1)
      expect(runReports(today.run_id)[0]!.fields["pipeline.period"]).toBe(today.timestamp.slice(0, 10))
      yield* call("DELETE", `/api/alert-rules/${rule.id}`, { token: yield* tokenOf("dso-operator-valsugana") })
    }))

  describe("failures", () => {
    it.effect("a failed nudge is retried by a redelivery; the webhook that worked is not sent again", () =>
      Effect.gen(function*() {
        const hot = yield* breachDay("dso-alto-garda")
        const hook = yield* webhookReceiver()
        const token = yield* tokenOf("dso-operator")
        yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: hook.url } })
        const rule = yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING" })
        const recorder = yield* SentNudges
        const before = recorder.sent.length
        recorder.failWith = "Nudging service is unreachable (ingest_event): connection refused"
        const event = runEvent({ network_id: "dso-alto-garda", period: hot.date })
        yield* publishRun(event)
        yield* waitFor("the first report", () => runReports(event.run_id).length === 1)
        expect(outcomes(event.run_id)).toEqual({ [rule.id]: "partly-failed" })
        expect(hook.received).toHaveLength(1)
        recorder.failWith = undefined
        yield* publishRun(event)
        yield* waitFor("the retry's report", () => runReports(event.run_id).length === 2)
        expect(outcomes(event.run_id)).toEqual({ [rule.id]: "sent" })
        expect(recorder.sent.length).toBe(before + 1)
        expect(hook.received).toHaveLength(1)
        // Done now: a third delivery sends nothing.
        yield* publishRun(event)
        yield* waitFor("the third report", () => runReports(event.run_id).length === 3)
        expect(outcomes(event.run_id)).toEqual({ [rule.id]: "already-handled" })
        yield* call("DELETE", `/api/alert-rules/${rule.id}`, { token })
        yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: null } })
      }).pipe(Effect.scoped))

    it.effect("a webhook answering 500 is tried WEBHOOK_MAX_ATTEMPTS times and recorded as failed; the nudge still goes", () =>
      Effect.gen(function*() {
        const hot = yield* breachDay("dso-alto-garda")
        const hook = yield* webhookReceiver(() => 500)
        const token = yield* tokenOf("dso-operator")
        yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: hook.url } })
        const rule = yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING" })
        const recorder = yield* SentNudges
        const before = recorder.sent.length
        const event = runEvent({ network_id: "dso-alto-garda", period: hot.date })
        yield* publishRun(event)
        yield* waitFor("the report", () => runReports(event.run_id).length === 1)
        expect(outcomes(event.run_id)).toEqual({ [rule.id]: "partly-failed" })
        expect(hook.received).toHaveLength(2)
        expect(recorder.sent.length).toBe(before + 1)
        yield* call("DELETE", `/api/alert-rules/${rule.id}`, { token })
        yield* call("PUT", "/api/notification-settings", { token, json: { webhook_url: null } })
      }).pipe(Effect.scoped))
  })
})
