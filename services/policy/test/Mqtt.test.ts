/**
 * The mosquitto-go-auth endpoints: tokens from the header (remote JWT mode) or the body (HTTP
 * backend, JSON or form-encoded), every `acc` combination, superusers, and the 200/403 contract.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { auditSince, logs, post, serviceLayer, tokens } from "./helpers.js"

const telemetry = "rec/telemetry/pv/meter-7/readings"

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("mqtt", (it) => {
  it.effect("/mqtt/user: 200 for a valid token (header or body), 403 otherwise", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const viewer = yield* mint("viewer")
      // go-auth's remote JWT mode: the token in the header, a `null` JSON body.
      const header = yield* post("/mqtt/user", { token: viewer, text: { body: "null", contentType: "application/json" } })
      expect(header).toMatchObject({ status: 200, body: { ok: true, reason: "authenticated" } })
      expect((yield* post("/mqtt/user", { token: viewer })).status).toBe(200)
      // The HTTP backend: username/password form fields, the token as the password.
      const form = yield* post("/mqtt/user", { form: { username: "vittoria", password: viewer, clientid: "c-1" } })
      expect(form).toMatchObject({ status: 200, body: { ok: true } })
      const json = yield* post("/mqtt/user", { json: { username: viewer } })
      expect(json.status).toBe(200)

      expect(yield* post("/mqtt/user")).toMatchObject({ status: 403, body: { ok: false, reason: "missing token" } })
      expect(yield* post("/mqtt/user", { form: { username: "vittoria", password: "secret" } })).toMatchObject({
        status: 403,
        body: { ok: false, reason: "missing token" }
      })
      const expired = yield* mint("viewer", { expired: true })
      const refused = yield* post("/mqtt/user", { token: expired })
      expect(refused).toMatchObject({ status: 403, body: { ok: false, reason: "invalid credentials: Token has expired" } })
      const tampered = viewer.slice(0, -4) + (viewer.endsWith("AAAA") ? "BBBB" : "AAAA")
      expect((yield* post("/mqtt/user", { token: tampered })).status).toBe(403)
      expect(yield* post("/mqtt/user", { headers: { authorization: "Basic dXNlcjpwYXNz" } })).toMatchObject({
        status: 403,
        body: { ok: false, reason: "invalid authorization header" }
      })
    }))

  it.effect("/mqtt/acl: every acc combination is checked action by action", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const acl = (token: string, topic: string, acc: number) =>
        post("/mqtt/acl", { token, json: { clientid: "client-1", topic, acc } })
      const viewer = yield* mint("viewer")
      // Viewers may subscribe and read telemetry readings, never publish.
      const viewerExpected: Record<number, boolean> = { 0: false, 1: true, 2: false, 3: false, 4: true, 5: true, 6: false, 7: false }
      for (const [acc, allowed] of Object.entries(viewerExpected)) {
        const reply = yield* acl(viewer, telemetry, Number(acc))
        expect(reply.status, `viewer acc ${acc}`).toBe(allowed ? 200 : 403)
        expect(reply.body, `viewer acc ${acc}`).toMatchObject({ ok: allowed })
      }
      expect((yield* acl(viewer, telemetry, 3)).body).toEqual({
        ok: false,
        reason: "publish: no ACL rule matched or capability missing"
      })
      expect((yield* acl(viewer, telemetry, 0)).body).toEqual({ ok: false, reason: "acc 0 names no action" })
      expect((yield* acl(viewer, telemetry, 5)).body).toEqual({ ok: true, reason: "authorized" })

      // Administrators reach every topic with every action.
      const admin = yield* mint("admin")
      for (const acc of [1, 2, 3, 4, 5, 6, 7]) {
        expect((yield* acl(admin, "rec/system/alerts/high", acc)).status, `admin acc ${acc}`).toBe(200)
      }
      expect((yield* acl(admin, "#", 4)).status).toBe(200)

      // Wildcards: a filter is granted only by a pattern at least as wide at every level.
      expect((yield* acl(viewer, "rec/telemetry/+/+/readings", 4)).status).toBe(200)
      expect((yield* acl(viewer, "rec/telemetry/#", 4)).status).toBe(403)
      expect((yield* acl(viewer, "#", 4)).status).toBe(403)
      expect((yield* acl(viewer, "rec/telemetry/pv/meter-7", 4)).status).toBe(403)

      // Services need both a capability (mqtt.*) and an ACL rule (dt.*, pipeline.*).
      const twin = yield* mint("svc-digital-twin")
      expect((yield* acl(twin, "rec/digital-twin/events/meter/m-1", 2)).status).toBe(200)
      expect((yield* acl(twin, "rec/digital-twin/events/meter/m-1", 4)).status).toBe(403)
      const grid = yield* mint("svc-grid")
      expect((yield* acl(grid, "rec/digital-twin/state/#", 4)).status).toBe(200)
      expect((yield* acl(grid, "rec/digital-twin/state/x", 2)).status).toBe(403)
      const pipelines = yield* mint("svc-pipelines")
      expect((yield* acl(pipelines, "rec/pipelines/runs/grid", 2)).status).toBe(200)
      expect((yield* acl(yield* mint("svc-no-scopes"), "rec/pipelines/runs/grid", 2)).status).toBe(403)

      // The platform's MQTT traffic, each service with the token dev/identities.yaml issues it.
      // Pipeline runs: the grid gateway and the flexibility service follow them (also as a shared
      // subscription of replicas), and cannot publish them.
      expect((yield* acl(grid, "rec/pipelines/runs/+", 5)).status).toBe(200)
      expect((yield* acl(grid, "$share/grid-gateway/rec/pipelines/runs/+", 5)).status).toBe(200)
      const flexibility = yield* mint("svc-flexibility")
      expect((yield* acl(flexibility, "rec/pipelines/runs/+", 4)).status).toBe(200)
      expect((yield* acl(flexibility, "rec/pipelines/runs/grid", 2)).status).toBe(403)
      // Accepted commitments: the flexibility service announces them, the pipelines follow them.
      expect((yield* acl(flexibility, "rec/flexibility/committed/u-1", 2)).status).toBe(200)
      expect((yield* acl(pipelines, "rec/flexibility/committed/+", 4)).status).toBe(200)
      expect((yield* acl(pipelines, "rec/flexibility/committed/u-1", 2)).status).toBe(403)
      // Registry updates: the registry announces them, every service that reads MQTT follows them;
      // dataset.admin (which the pipelines hold) no longer lets anyone publish them.
      const registry = yield* mint("svc-rec-registry")
      expect((yield* acl(registry, "rec/registry/updates/community/c-1", 2)).status).toBe(200)
      expect((yield* acl(pipelines, "rec/registry/updates/community/c-1", 2)).status).toBe(403)
      for (const follower of ["svc-grid", "svc-flexibility", "svc-nudging", "svc-pipelines"]) {
        expect((yield* acl(yield* mint(follower), "rec/registry/updates/#", 5)).status, follower).toBe(200)
      }
      expect((yield* acl(registry, "rec/registry/updates/#", 4)).status).toBe(403)
      expect((yield* acl(viewer, "rec/registry/updates/#", 4)).status).toBe(403)
    }))

  it.effect("/mqtt/acl: form-encoded and JSON bodies, the token in the header or as username", () =>
    Effect.gen(function*() {
      const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
      const form = yield* post("/mqtt/acl", { form: { username: viewer, topic: telemetry, clientid: "c", acc: "1" } })
      expect(form).toMatchObject({ status: 200, body: { ok: true } })
      const formDenied = yield* post("/mqtt/acl", { form: { username: viewer, topic: telemetry, clientid: "c", acc: "2" } })
      expect(formDenied.status).toBe(403)
      const json = yield* post("/mqtt/acl", { json: { username: viewer, topic: telemetry, acc: 4 } })
      expect(json.status).toBe(200)
      // The header wins; the body's username is then just the MQTT user name.
      const header = yield* post("/mqtt/acl", { token: viewer, json: { username: "vittoria", topic: telemetry, acc: 1 } })
      expect(header.status).toBe(200)
      // A plain user name is not a credential.
      const plain = yield* post("/mqtt/acl", { json: { username: "vittoria", topic: telemetry, acc: 1 } })
      expect(plain).toMatchObject({ status: 403, body: { ok: false, reason: "missing token" } })
      const bad = yield* post("/mqtt/acl", { json: { username: "a.b.c", topic: telemetry, acc: 1 } })
      expect(bad.status).toBe(403)
    }))

  it.effect("/mqtt/acl: malformed requests are 400, never 500", () =>
    Effect.gen(function*() {
      const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
      for (const body of [
        { topic: telemetry, acc: 8 },
        { topic: telemetry, acc: -1 },
        { topic: telemetry, acc: 1.5 },
        { topic: telemetry, acc: "read" },
        { topic: telemetry },
        { acc: 1 },
        { topic: "", acc: 1 },
        { topic: 7, acc: 1 }
      ]) {
        const reply = yield* post("/mqtt/acl", { token: viewer, json: body })
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body, JSON.stringify(body)).toMatchObject({ detail: expect.stringMatching(/^Invalid request/) })
      }
      const form = yield* post("/mqtt/acl", { token: viewer, form: { topic: telemetry, acc: "seven" } })
      expect(form.status).toBe(400)
    }))

  it.effect("/mqtt/superuser: admins and mqtt.admin, token from the header or the body", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const admin = yield* mint("admin")
      expect(yield* post("/mqtt/superuser", { token: admin, text: { body: "null", contentType: "application/json" } })).toMatchObject({
        status: 200,
        body: { ok: true, reason: "superuser" }
      })
      expect((yield* post("/mqtt/superuser", { json: { username: admin } })).status).toBe(200)
      expect((yield* post("/mqtt/superuser", { form: { username: admin } })).status).toBe(200)
      expect((yield* post("/mqtt/superuser", { token: yield* mint("svc-policy") })).status).toBe(200)
      expect(yield* post("/mqtt/superuser", { token: yield* mint("viewer") })).toMatchObject({
        status: 403,
        body: { ok: false, reason: "not superuser" }
      })
      expect(yield* post("/mqtt/superuser", { json: { username: "root" } })).toMatchObject({
        status: 403,
        body: { reason: "missing token" }
      })
      expect((yield* post("/mqtt/superuser", { text: { body: "{oops", contentType: "application/json" } })).status).toBe(400)
    }))

  it.effect("ACL checks are audited per action with the broker as source", () =>
    Effect.gen(function*() {
      const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
      const from = logs.length
      yield* post("/mqtt/acl", { token: viewer, json: { clientid: "c", topic: telemetry, acc: 5 } })
      const records = auditSince(from)
      expect(records.map((r) => r.fields.action)).toEqual(["subscribe", "read"])
      expect(records.every((r) => r.fields.source_service === "mosquitto" && r.fields.allowed === true)).toBe(true)
      expect(records[0]?.fields.resource_id).toBe(telemetry)
    }))
})
