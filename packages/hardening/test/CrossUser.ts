/**
 * Another user's resources (issue 19 point 3): for every user-owned resource, a second user who
 * names the first one's id gets a 404 (not a 403 that would confirm the id exists) and nothing
 * changes for the owner. Per-user settings without ids: each user reads and writes their own only.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { detailOf, type Reply, request } from "./support/Http.js"
import { repoRoot, Stack, users } from "./support/Stack.js"
import type { It } from "./support/Types.js"

export interface CrossUserOutcome {
  readonly service: string
  readonly attempt: string
  readonly status: number
}

export const crossUserOutcomes: Array<CrossUserOutcome> = []

const community = "it-energy-community"

/** A refusal of another user's id: 404 with a detail, recorded for the figures. */
const expectNotFound = (service: string, attempt: string, reply: Reply) => {
  crossUserOutcomes.push({ service, attempt, status: reply.status })
  expect(reply.status, `${service}: ${attempt}: ${reply.text.slice(0, 200)}`).toBe(404)
  expect(detailOf(reply.body), `${service}: ${attempt}`).toBeDefined()
}

const userToken = (name: string) => Effect.flatMap(Stack, (s) => Effect.orDie(s.idp.mint(name, { client: "rec-frontend" })))
const serviceToken = (name: string) => Effect.flatMap(Stack, (s) => Effect.orDie(s.idp.mint(name)))
const call = (method: string, url: string, options: Parameters<typeof request>[2] = {}) => Effect.promise(() => request(method, url, options))

export const crossUserTests = (it: It) => {
  it.effect("nudging and participant gateway: another user's notification is a 404 to read, mark or delete; it stays unread", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const nudging = urls.nudging
      const giulia = yield* userToken(users.giulia.name)
      const luca = yield* userToken(users.luca.name)
      const ingest = yield* call("POST", `${nudging}/ingest-event`, {
        token: yield* serviceToken("svc-grid"),
        json: {
          event_type: "imported_up",
          user_id: users.giulia.sub,
          community_id: community,
          facts: { facts_version: "1.0", scenario: "imported_up", delta_pct: 21.5, cur: 2, prev: 1 }
        }
      })
      expect(ingest.status, ingest.text).toBe(200)
      const own = yield* call("GET", `${nudging}/notifications?user_id=${users.giulia.sub}&community_id=${community}`, { token: giulia })
      expect(own.status, own.text).toBe(200)
      const items = (own.body as { items: Array<{ id: string; read_at: string | null }> }).items
      expect(items.length).toBeGreaterThan(0)
      const id = items[0]!.id
      expectNotFound("nudging", "GET another user's notification", yield* call("GET", `${nudging}/notifications/${id}`, { token: luca }))
      expectNotFound("nudging", "mark another user's notification read", yield* call("POST", `${nudging}/notifications/${id}/read`, { token: luca }))
      expectNotFound("nudging", "delete another user's notification", yield* call("DELETE", `${nudging}/notifications/${id}`, { token: luca }))
      const gateway = urls["participant-gateway"]
      expectNotFound("participant-gateway", "mark another user's notification read", yield* call("POST", `${gateway}/api/notifications/${id}/read`, { token: luca }))
      expectNotFound("participant-gateway", "delete another user's notification", yield* call("DELETE", `${gateway}/api/notifications/${id}`, { token: luca }))
      // The owner's notification is untouched: still there, still unread.
      const after = yield* call("GET", `${nudging}/notifications/${id}`, { token: giulia })
      expect(after.status).toBe(200)
      expect((after.body as { read_at: string | null }).read_at).toBeNull()
      // Another user's id in the list's filter does not list them either.
      const filtered = yield* call("GET", `${nudging}/notifications?user_id=${users.giulia.sub}&community_id=${community}`, { token: luca })
      crossUserOutcomes.push({ service: "nudging", attempt: "list with another user's user_id", status: filtered.status })
      expect(filtered.status).toBeGreaterThanOrEqual(400)
      expect(filtered.text).not.toContain(id)
    }), 120_000)

  it.effect("nudging and participant gateway: preferences and settings are each user's own", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const giulia = yield* userToken(users.giulia.name)
      const luca = yield* userToken(users.luca.name)
      const before = yield* call("GET", `${urls.nudging}/preferences?user_id=${users.luca.sub}&community_id=${community}`, { token: luca })
      const set = yield* call("PUT", `${urls.nudging}/preferences`, {
        token: giulia,
        json: { user_id: users.luca.sub, community_id: community, max_per_day: 7 }
      })
      crossUserOutcomes.push({ service: "nudging", attempt: "PUT preferences naming another user_id", status: set.status })
      // Either refused, or applied to the caller: never to the user named.
      const after = yield* call("GET", `${urls.nudging}/preferences?user_id=${users.luca.sub}&community_id=${community}`, { token: luca })
      expect(after.body).toEqual(before.body)
      const gateway = urls["participant-gateway"]
      const lucaSettings = yield* call("GET", `${gateway}/api/settings`, { token: luca })
      const changed = yield* call("PUT", `${gateway}/api/settings`, { token: giulia, json: { notifications_enabled: true, preferred_language: "it", max_per_day: 4 } })
      expect(changed.status, changed.text).toBe(200)
      expect((yield* call("GET", `${gateway}/api/settings`, { token: luca })).body).toEqual(lucaSettings.body)
    }), 120_000)

  it.effect("assistant: another user's attachment and conversation are a 404 to read or delete, and stay", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const base = urls.assistant
      const giulia = yield* userToken(users.giulia.name)
      const luca = yield* userToken(users.luca.name)
      const form = new FormData()
      form.append("file", new Blob(["# Giulia's contract\n\nThe private terms of Giulia's supply contract."], { type: "text/markdown" }), "contract.md")
      const upload = yield* call("POST", `${base}/upload`, { token: giulia, body: form })
      expect(upload.status, upload.text).toBeLessThan(300)
      const attachment = (upload.body as { id: string }).id
      expectNotFound("assistant", "GET another user's attachment", yield* call("GET", `${base}/attachments/${attachment}/raw`, { token: luca }))
      expectNotFound("assistant", "delete another user's attachment", yield* call("DELETE", `${base}/attachments/${attachment}`, { token: luca }))
      const mine = yield* call("GET", `${base}/attachments/${attachment}/raw`, { token: giulia })
      expect(mine.status).toBe(200)
      expect(mine.text).toContain("private terms")

      const chat = yield* call("POST", `${base}/chat`, { token: giulia, json: { message: "What does my contract say?" } })
      expect(chat.status, chat.text.slice(0, 300)).toBe(200)
      const conversation = /"conversation_id":"([^"]+)"/.exec(chat.text)?.[1]
      expect(conversation).toBeDefined()
      expectNotFound("assistant", "GET another user's conversation", yield* call("GET", `${base}/conversations/${conversation}/messages`, { token: luca }))
      expectNotFound("assistant", "delete another user's conversation", yield* call("DELETE", `${base}/conversations/${conversation}`, { token: luca }))
      const continued = yield* call("POST", `${base}/chat`, { token: luca, json: { message: "hello", conversation_id: conversation } })
      expectNotFound("assistant", "continue another user's conversation", continued)
      const named = yield* call("POST", `${base}/chat`, { token: luca, json: { message: "summarise", attachment_ids: [attachment] } })
      expectNotFound("assistant", "chat about another user's attachment", named)
      const messages = yield* call("GET", `${base}/conversations/${conversation}/messages`, { token: giulia })
      expect(messages.status).toBe(200)
      expect(messages.text).toContain("What does my contract say?")
    }), 120_000)

  it.effect("grid gateway: another operator's alert rule is a 404 to change or delete; settings are each user's own", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const base = urls["grid-gateway"]
      const alto = yield* userToken("dso-operator")
      const valsugana = yield* userToken("dso-operator-valsugana")
      const created = yield* call("POST", `${base}/api/alert-rules`, { token: alto, json: { risk_types: ["heat"], threshold: "WARNING" } })
      expect(created.status, created.text).toBe(201)
      const rule = created.body as { id: string }
      expectNotFound("grid-gateway", "PATCH another user's alert rule", yield* call("PATCH", `${base}/api/alert-rules/${rule.id}`, { token: valsugana, json: { threshold: "ALERT" } }))
      expectNotFound("grid-gateway", "DELETE another user's alert rule", yield* call("DELETE", `${base}/api/alert-rules/${rule.id}`, { token: valsugana }))
      const listed = (yield* call("GET", `${base}/api/alert-rules`, { token: alto })).body as Array<{ id: string; threshold: string }>
      expect(listed.find((r) => r.id === rule.id)?.threshold).toBe("WARNING")
      expect(((yield* call("GET", `${base}/api/alert-rules`, { token: valsugana })).body as Array<{ id: string }>).map((r) => r.id)).not.toContain(rule.id)
      const set = yield* call("PUT", `${base}/api/notification-settings`, { token: alto, json: { email_recipients: "control@dso.example" } })
      expect(set.status, set.text).toBe(200)
      const theirs = yield* call("GET", `${base}/api/notification-settings`, { token: valsugana })
      expect((theirs.body as { email_recipients: unknown }).email_recipients).toBeNull()
    }), 120_000)

  it.effect("flexibility and participant gateway: another user's commitment is a 404 to read or withdraw, and stays", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const base = urls.flexibility
      const giulia = yield* userToken(users.giulia.name)
      const luca = yield* userToken(users.luca.name)
      const start = Date.now() + 2 * 3_600_000
      const created = yield* call("POST", `${base}/api/commitments`, {
        token: giulia,
        json: { suggestion_id: "hardening-s1", period_start: new Date(start).toISOString(), period_end: new Date(start + 3_600_000).toISOString() }
      })
      expect(created.status, created.text).toBe(201)
      const id = (created.body as { id: string }).id
      expectNotFound("flexibility", "GET another user's commitment", yield* call("GET", `${base}/api/commitments/${id}`, { token: luca }))
      expectNotFound("flexibility", "DELETE another user's commitment", yield* call("DELETE", `${base}/api/commitments/${id}`, { token: luca }))
      const gateway = urls["participant-gateway"]
      expectNotFound("participant-gateway", "GET another user's commitment", yield* call("GET", `${gateway}/api/commitments/${id}`, { token: luca }))
      expectNotFound("participant-gateway", "DELETE another user's commitment", yield* call("DELETE", `${gateway}/api/commitments/${id}`, { token: luca }))
      const listed = yield* call("GET", `${base}/api/commitments?user_id=${users.giulia.sub}`, { token: luca })
      crossUserOutcomes.push({ service: "flexibility", attempt: "list with another user's user_id", status: listed.status })
      expect(listed.status).toBeGreaterThanOrEqual(400)
      expect(listed.text).not.toContain(id)
      const still = yield* call("GET", `${base}/api/commitments/${id}`, { token: giulia })
      expect(still.status).toBe(200)
      expect(still.body).toMatchObject({ id, user_id: users.giulia.sub })
    }), 120_000)

  it.effect("registry: a user who is not a member gets a 404 for the community, its members and their assets", () =>
    Effect.gen(function*() {
      const { urls } = yield* Stack
      const base = urls.registry
      const bundle = fs.readFileSync(path.join(repoRoot, "examples/it-energy-community.bundle.yaml"))
      const form = new FormData()
      form.append("file", new Blob([bundle], { type: "application/yaml" }), "bundle.yaml")
      const imported = yield* call("POST", `${base}/admin/import`, { token: yield* userToken("admin"), body: form })
      expect(imported.status, imported.text.slice(0, 500)).toBe(201)
      const member = yield* userToken(users.giulia.name)
      const outsider = yield* userToken("nogroup")
      const own = yield* call("GET", `${base}/user/communities/${community}`, { token: member })
      expect(own.status, own.text.slice(0, 300)).toBe(200)
      expectNotFound("registry", "GET a community the user is not a member of", yield* call("GET", `${base}/user/communities/${community}`, { token: outsider }))
      expectNotFound("registry", "GET the members of that community", yield* call("GET", `${base}/user/communities/${community}/members`, { token: outsider }))
      const members = (yield* call("GET", `${base}/user/communities/${community}/members`, { token: member })).body as unknown
      const memberId = JSON.stringify(members).match(/"id":"([^"]+)"/)?.[1]
      if (memberId !== undefined) {
        expectNotFound("registry", "GET a member of that community", yield* call("GET", `${base}/user/members/${encodeURIComponent(memberId)}`, { token: outsider }))
        expectNotFound("registry", "GET that member's assets", yield* call("GET", `${base}/user/members/${encodeURIComponent(memberId)}/assets`, { token: outsider }))
      }
      const listed = yield* call("GET", `${base}/user/communities`, { token: outsider })
      expect(listed.text).not.toContain(community)
    }), 120_000)
}
