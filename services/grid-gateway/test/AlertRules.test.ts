/**
 * Alert rules and notification settings over HTTP (issue 14 point 4): the owner and network come
 * from the token, bad input is a clear 400/422 and writes nothing, another operator's rule is a
 * 404 and survives, null for a required field in PATCH is a 422 (the original's 500), webhook
 * URLs follow the webhook rules, and the signing secret is answered once.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import * as Effect from "effect/Effect"
import { call, gatewayLayer, tokenOf } from "./support/Gateway.js"

const rule = { risk_types: ["wind"], threshold: "ALERT" }

const as = (name: string) => Effect.map(tokenOf(name), (token) => ({ token }))

const postgresSkip = await Testing.postgresSkipReason()

for (const backend of ["pglite", "postgres"] as const) {
const skip = backend === "postgres" ? postgresSkip : undefined
describe.skipIf(skip !== undefined)(`on ${backend}${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
layer(
  gatewayLayer({ database: backend, hosts: { "hooks.dso.example": ["93.184.216.34"], "internal.dso.example": ["10.1.2.3"] } }),
  { excludeTestServices: true, timeout: "90 seconds" }
)("alert rules and settings", (it) => {
  describe("alert rules", () => {
    it.effect("create: owner and network from the token, defaults, normalised hazards and recipients", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const created = yield* call("POST", "/api/alert-rules", {
          ...alto,
          json: {
            risk_types: ["heat", "wind", "heat"],
            threshold: "WARNING",
            recipients: "Control@Dso.example; control@dso.example,night@dso.example  ops@dso.example",
            user_id: "someone-else"
          }
        })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({
          user_id: "29f9d00f-a686-482e-b4bd-7b84e56869c1",
          network_id: "dso-alto-garda",
          risk_types: ["wind", "heat"],
          threshold: "WARNING",
          recipients: ["Control@Dso.example", "night@dso.example", "ops@dso.example"],
          active: true
        })
        expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/)
        expect(Date.parse(created.body.created_at)).not.toBeNaN()
        const inactive = yield* call("POST", "/api/alert-rules", { ...alto, json: { ...rule, active: false, recipients: [] } })
        expect(inactive.body).toMatchObject({ active: false, recipients: null })
        const listed = yield* call("GET", "/api/alert-rules", alto)
        expect(listed.body.map((r: { id: string }) => r.id)).toEqual([created.body.id, inactive.body.id])
      }))

    it.effect("bad input is a 400 naming every problem, and nothing is written", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const before = (yield* call("GET", "/api/alert-rules", alto)).body.length
        const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>]> = [
          [{ ...rule, risk_types: [] }, ["risk_types"]],
          [{ ...rule, risk_types: ["snow"] }, ["risk_types"]],
          [{ ...rule, risk_types: "wind" }, ["risk_types"]],
          [{ ...rule, threshold: "HIGH" }, ["threshold"]],
          [{ risk_types: ["wind"] }, ["threshold"]],
          [{ threshold: "ALERT" }, ["risk_types"]],
          [{ ...rule, recipients: "ok@dso.example, a@b, @x.y, nobody" }, ["recipients"]],
          [{ ...rule, active: "yes" }, ["active"]],
          [{ risk_types: [], threshold: "LOW", recipients: 5 }, ["recipients", "risk_types", "threshold"]]
        ]
        for (const [body, fields] of cases) {
          const reply = yield* call("POST", "/api/alert-rules", { ...alto, json: body })
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect([...new Set(reply.body.issues.map((i: { path: Array<string> }) => i.path[0]))].sort(), JSON.stringify(body))
            .toEqual(fields)
        }
        const emails = yield* call("POST", "/api/alert-rules", { ...alto, json: { ...rule, recipients: "ok@dso.example, a@b, nobody" } })
        expect(emails.body.issues).toEqual([{ path: ["recipients"], message: "not e-mail addresses: \"a@b\", \"nobody\"" }])
        const notJson = yield* call("POST", "/api/alert-rules", { ...alto, text: { body: "{risk_types:", contentType: "application/json" } })
        expect(notJson.status).toBe(400)
        expect((yield* call("GET", "/api/alert-rules", alto)).body.length).toBe(before)
      }))

    it.effect("the network: a member of two DSOs names it; nobody writes rules for a network not theirs", () =>
      Effect.gen(function*() {
        const multi = yield* as("dso-multi")
        const ambiguous = yield* call("POST", "/api/alert-rules", { ...multi, json: rule })
        expect(ambiguous.status).toBe(422)
        expect(ambiguous.body.detail).toBe(
          "You belong to several DSO organizations (dso-alto-garda, dso-valsugana): name the network in network_id"
        )
        const named = yield* call("POST", "/api/alert-rules", { ...multi, json: { ...rule, network_id: "dso-valsugana" } })
        expect(named.status).toBe(201)
        expect(named.body.network_id).toBe("dso-valsugana")
        const foreign = yield* call("POST", "/api/alert-rules", {
          ...(yield* as("dso-operator")),
          json: { ...rule, network_id: "dso-valsugana" }
        })
        expect(foreign.status).toBe(403)
        expect(foreign.body.detail).toBe("network_id mismatch: user does not belong to the DSO of this network")
        const noDso = yield* call("POST", "/api/alert-rules", { ...(yield* as("participant")), json: rule })
        expect(noDso.status).toBe(403)
        expect(noDso.body).toEqual({ detail: "missing DSO organization membership" })
        // Without a DSO, listing is allowed and empty.
        expect((yield* call("GET", "/api/alert-rules", yield* as("participant"))).body).toEqual([])
      }))

    it.effect("PATCH changes the fields given, refuses null for required ones (422), clears recipients with null", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const created = (yield* call("POST", "/api/alert-rules", { ...alto, json: { ...rule, recipients: ["a@dso.example"] } })).body
        const partial = yield* call("PATCH", `/api/alert-rules/${created.id}`, { ...alto, json: { threshold: "WARNING" } })
        expect(partial.status).toBe(200)
        expect(partial.body).toMatchObject({ threshold: "WARNING", risk_types: ["wind"], recipients: ["a@dso.example"], active: true })
        expect(partial.body.updated_at >= created.updated_at).toBe(true)
        for (const field of ["threshold", "risk_types", "active"]) {
          const reply = yield* call("PATCH", `/api/alert-rules/${created.id}`, { ...alto, json: { [field]: null } })
          expect(reply.status, field).toBe(422)
          expect(reply.body, field).toEqual({
            detail: `${field} cannot be null: leave it out to keep the current value`,
            issues: [{ path: [field], message: "cannot be null" }]
          })
        }
        const both = yield* call("PATCH", `/api/alert-rules/${created.id}`, { ...alto, json: { threshold: null, active: null } })
        expect(both.body.detail).toBe("threshold, active cannot be null: leave them out to keep the current value")
        const cleared = yield* call("PATCH", `/api/alert-rules/${created.id}`, { ...alto, json: { recipients: null, active: false } })
        expect(cleared.body).toMatchObject({ recipients: null, active: false, threshold: "WARNING" })
        const invalid = yield* call("PATCH", `/api/alert-rules/${created.id}`, { ...alto, json: { risk_types: ["hail"] } })
        expect(invalid.status).toBe(400)
        // Nothing of the refused requests was applied.
        const now = (yield* call("GET", "/api/alert-rules", alto)).body.find((r: { id: string }) => r.id === created.id)
        expect(now).toMatchObject({ threshold: "WARNING", risk_types: ["wind"], recipients: null, active: false })
      }))

    it.effect("another operator's rule is a 404 for PATCH and DELETE and survives; a malformed id is a 400", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const valsugana = yield* as("dso-operator-valsugana")
        const mine = (yield* call("POST", "/api/alert-rules", { ...alto, json: rule })).body
        const patched = yield* call("PATCH", `/api/alert-rules/${mine.id}`, { ...valsugana, json: { active: false } })
        expect(patched.status).toBe(404)
        expect(patched.body).toEqual({ detail: `You have no alert rule ${mine.id}` })
        expect((yield* call("DELETE", `/api/alert-rules/${mine.id}`, valsugana)).status).toBe(404)
        // A colleague of the same DSO does not share rules either.
        expect((yield* call("GET", "/api/alert-rules", yield* as("dso-multi"))).body.some((r: { id: string }) => r.id === mine.id))
          .toBe(false)
        const still = (yield* call("GET", "/api/alert-rules", alto)).body.find((r: { id: string }) => r.id === mine.id)
        expect(still.active).toBe(true)
        expect((yield* call("DELETE", "/api/alert-rules/not-a-uuid", alto)).status).toBe(400)
        expect((yield* call("DELETE", "/api/alert-rules/00000000-0000-4000-8000-000000000000", alto)).status).toBe(404)
        const deleted = yield* call("DELETE", `/api/alert-rules/${mine.id}`, alto)
        expect(deleted.status).toBe(204)
        expect(deleted.body).toBeNull()
        expect((yield* call("DELETE", `/api/alert-rules/${mine.id}`, alto)).status).toBe(404)
      }))

    it.effect("services: grid.admin manages its own rules for a named network; without it 403", () =>
      Effect.gen(function*() {
        const svc = yield* as("svc-grid")
        const unnamed = yield* call("POST", "/api/alert-rules", { ...svc, json: rule })
        expect(unnamed.status).toBe(422)
        const named = yield* call("POST", "/api/alert-rules", { ...svc, json: { ...rule, network_id: "dso-val-di-non", recipients: "ops@dso.example" } })
        expect(named.status).toBe(201)
        expect(named.body.user_id).toBe("svc-grid")
        expect((yield* call("GET", "/api/alert-rules", svc)).body.map((r: { id: string }) => r.id)).toEqual([named.body.id])
        const denied = yield* call("GET", "/api/alert-rules", yield* as("svc-no-scopes"))
        expect(denied.status).toBe(403)
        expect(denied.body).toEqual({ detail: "service missing grid.admin scope" })
      }))
  })

  describe("notification settings", () => {
    it.effect("GET answers defaults without writing; PUT merges the fields given", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator-valsugana")
        const fresh = yield* call("GET", "/api/notification-settings", alto)
        expect(fresh.body).toEqual({
          user_id: "a16a1ce3-ddc7-4e91-8e41-450e0c9ad461",
          email_recipients: null,
          webhook_url: null,
          updated_at: null
        })
        const set = yield* call("PUT", "/api/notification-settings", { ...alto, json: { email_recipients: "a@dso.example b@dso.example" } })
        expect(set.status).toBe(200)
        expect(set.body).toMatchObject({ email_recipients: ["a@dso.example", "b@dso.example"], webhook_url: null })
        expect(set.body.webhook_secret).toBeUndefined()
        const merged = yield* call("PUT", "/api/notification-settings", { ...alto, json: {} })
        expect(merged.body.email_recipients).toEqual(["a@dso.example", "b@dso.example"])
        const cleared = yield* call("PUT", "/api/notification-settings", { ...alto, json: { email_recipients: null } })
        expect(cleared.body.email_recipients).toBeNull()
        expect((yield* call("GET", "/api/notification-settings", alto)).body.updated_at).not.toBeNull()
        // Each user their own.
        expect((yield* call("GET", "/api/notification-settings", yield* as("dso-multi"))).body.email_recipients).toBeNull()
      }))

    it.effect("a webhook gets a secret answered once; the same URL keeps it, a new URL or a rotation replaces it", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const set = yield* call("PUT", "/api/notification-settings", { ...alto, json: { webhook_url: "https://hooks.dso.example/grid" } })
        expect(set.status).toBe(200)
        expect(set.body.webhook_url).toBe("https://hooks.dso.example/grid")
        expect(set.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
        const read = yield* call("GET", "/api/notification-settings", alto)
        expect(read.body.webhook_secret).toBeUndefined()
        expect(JSON.stringify(read.body)).not.toContain(set.body.webhook_secret)
        const same = yield* call("PUT", "/api/notification-settings", { ...alto, json: { webhook_url: "https://hooks.dso.example/grid" } })
        expect(same.body.webhook_secret).toBeUndefined()
        const rotated = yield* call("PUT", "/api/notification-settings", { ...alto, json: { rotate_webhook_secret: true } })
        expect(rotated.body.webhook_secret).toMatch(/^whsec_/)
        expect(rotated.body.webhook_secret).not.toBe(set.body.webhook_secret)
        const moved = yield* call("PUT", "/api/notification-settings", { ...alto, json: { webhook_url: "https://hooks.dso.example/other" } })
        expect(moved.body.webhook_secret).toMatch(/^whsec_/)
        expect(moved.body.webhook_secret).not.toBe(rotated.body.webhook_secret)
        const removed = yield* call("PUT", "/api/notification-settings", { ...alto, json: { webhook_url: null } })
        expect(removed.body.webhook_url).toBeNull()
        const nothing = yield* call("PUT", "/api/notification-settings", { ...alto, json: { rotate_webhook_secret: true } })
        expect(nothing.status).toBe(422)
        expect(nothing.body.issues).toEqual([{ path: ["rotate_webhook_secret"], message: "needs a webhook_url: there is no webhook to sign for" }])
      }))

    it.effect("webhook URLs: https only, never a private, loopback or link-local address, names checked after resolving", () =>
      Effect.gen(function*() {
        const alto = yield* as("dso-operator")
        const refused = (url: string) =>
          Effect.map(call("PUT", "/api/notification-settings", { ...alto, json: { webhook_url: url } }), (r) => {
            expect(r.status, url).toBe(422)
            expect(r.body.issues[0].path, url).toEqual(["webhook_url"])
            return r.body.detail as string
          })
        expect(yield* refused("http://hooks.dso.example/grid")).toBe("webhook_url must be an https URL")
        expect(yield* refused("not a url")).toBe("webhook_url is not an absolute URL")
        expect(yield* refused("https://user:pw@hooks.dso.example/")).toBe("webhook_url must not contain credentials")
        expect(yield* refused("https://127.0.0.1/hook")).toBe("webhook_url points to a loopback address (127.0.0.1)")
        expect(yield* refused("https://10.0.0.7/hook")).toBe("webhook_url points to a private address (10.0.0.7)")
        expect(yield* refused("https://169.254.169.254/latest/meta-data")).toBe("webhook_url points to a link-local address (169.254.169.254)")
        expect(yield* refused("https://[::1]/hook")).toBe("webhook_url points to a loopback address (::1)")
        expect(yield* refused("https://[::ffff:127.0.0.1]/hook")).toBe("webhook_url points to a loopback address (::ffff:7f00:1)")
        expect(yield* refused("https://[fe80::1]/hook")).toBe("webhook_url points to a link-local address (fe80::1)")
        expect(yield* refused("https://localhost/hook")).toBe("webhook_url names a local host (localhost)")
        expect(yield* refused("https://internal.dso.example/hook"))
          .toBe("webhook_url host internal.dso.example resolves to a private address (10.1.2.3)")
        expect(yield* refused("https://nowhere.dso.example/hook")).toBe("webhook_url host nowhere.dso.example does not resolve (ENOTFOUND)")
        // Nothing was stored.
        expect((yield* call("GET", "/api/notification-settings", alto)).body.webhook_url).toBeNull()
      }))

    it.effect("writing settings needs a DSO organization; reading does not", () =>
      Effect.gen(function*() {
        const participant = yield* as("participant")
        expect((yield* call("GET", "/api/notification-settings", participant)).status).toBe(200)
        const put = yield* call("PUT", "/api/notification-settings", { ...participant, json: { email_recipients: "a@b.example" } })
        expect(put.status).toBe(403)
        expect(put.body).toEqual({ detail: "missing DSO organization membership" })
      }))
  })
})
})
}
