/**
 * Pipeline transitions (every pair of states), digital twin access and events (every action),
 * user data (owner, sharing, public dashboards, admins, services), `/authorize` routing, and the
 * audit record each decision leaves: over HTTP with real tokens.
 */
import { expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import * as Effect from "effect/Effect"
import { auditSince, logs, post, serviceLayer, tokens } from "./helpers.js"

type State = "pending" | "started" | "running" | "completed" | "failed" | "cancelled"
const states: ReadonlyArray<State> = ["pending", "started", "running", "completed", "failed", "cancelled"]

/** The valid moves: the spec's six plus the reference's failure, cancel and retry moves. */
const moves: Record<State, ReadonlyArray<State>> = {
  pending: ["started", "cancelled"],
  started: ["running", "failed", "cancelled"],
  running: ["completed", "failed", "cancelled"],
  completed: [],
  failed: ["pending"],
  cancelled: ["pending"]
}

const pipelineSubjects: ReadonlyArray<{
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  /** Targets this subject may move to (for valid pairs); `scope` marks a missing pipeline scope. */
  readonly targets: ReadonlyArray<State> | "scope"
  readonly user: boolean
}> = [
  { name: "viewer", scopes: ["pipeline.execute"], targets: [], user: true },
  { name: "editor", scopes: ["pipeline.execute"], targets: ["started", "running"], user: true },
  { name: "manager", scopes: ["pipeline.execute"], targets: ["started", "running", "cancelled", "pending"], user: true },
  { name: "admin", scopes: ["pipeline.execute"], targets: states, user: true },
  { name: "admin", scopes: ["dataset.admin"], targets: "scope", user: true },
  { name: "nogroup", scopes: ["pipeline.admin"], targets: [], user: true },
  { name: "svc-pipelines", scopes: ["pipeline.execute"], targets: ["started", "running", "completed", "failed"], user: false },
  { name: "svc-policy", scopes: ["pipeline.admin"], targets: states, user: false },
  { name: "svc-no-scopes", scopes: ["pipeline.status"], targets: [], user: false }
]

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("decisions", (it) => {
  it.effect("pipeline: every pair of states for every kind of subject", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      for (const subject of pipelineSubjects) {
        const token = yield* mint(subject.name, { scopes: subject.scopes })
        for (const from of states) {
          for (const to of states) {
            const reply = yield* post("/pipeline/transition", {
              token,
              json: { pipeline_id: "grid-resilience-flow", from_state: from, to_state: to }
            })
            const where = `${subject.name} (${subject.scopes.join(",")}) ${from} -> ${to}`
            const valid = moves[from].includes(to)
            const allowed = valid && subject.targets !== "scope" && subject.targets.includes(to)
            const reason = allowed
              ? "valid state transition authorized"
              : !valid
              ? "invalid state transition"
              : subject.targets === "scope"
              ? "missing pipeline scope for requesting client"
              : subject.user
              ? "insufficient privileges for transition"
              : "insufficient scope for transition"
            expect(reply.status, where).toBe(200)
            expect(reply.body, where).toMatchObject({ allowed, reason })
          }
        }
      }
    }))

  it.effect("pipeline: unknown states are refused as bad requests", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const reply = yield* post("/pipeline/transition", {
        token,
        json: { pipeline_id: "p", from_state: "pending", to_state: "exploded" }
      })
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({
        detail: "Invalid request: to_state: Expected \"pending\" | \"started\" | \"running\" | \"completed\" | \"failed\" | \"cancelled\", actual \"exploded\"",
        issues: [{ path: ["to_state"], message: expect.stringContaining("actual \"exploded\"") }]
      })
    }))

  it.effect("digital twin: every action for users by group and client scope, and for services", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const dtActions = ["read", "write", "simulate", "admin"] as const
      const levelOf = { nogroup: 0, viewer: 1, editor: 2, manager: 3, admin: 4 } as const
      const needed = { read: 1, write: 2, simulate: 3, admin: 4 } as const
      const scopesFor = {
        read: ["dt.read", "dt.write", "dt.admin"],
        write: ["dt.write", "dt.admin"],
        simulate: ["dt.simulate", "dt.admin"],
        admin: ["dt.admin"]
      } as const
      const clientScopes: ReadonlyArray<ReadonlyArray<string>> = [
        ["dt.read", "dt.write", "dt.simulate", "dt.admin"],
        ["dt.read"],
        ["dt.write"],
        ["dt.simulate"],
        ["dt.admin"],
        []
      ]
      for (const [name, level] of Object.entries(levelOf)) {
        for (const scopes of clientScopes) {
          const token = yield* mint(name, { scopes })
          for (const action of dtActions) {
            const reply = yield* post("/dt/access", { token, json: { dt_id: "dso-alto-garda", action } })
            const hasScope = scopes.some((s) => (scopesFor[action] as ReadonlyArray<string>).includes(s))
            const allowed = level >= needed[action] && hasScope
            const where = `${name} (${scopes.join(",")}) ${action}`
            expect(reply.body, where).toMatchObject({ allowed })
            if (!allowed) {
              expect((reply.body as { reason: string }).reason, where).toBe(
                hasScope ? "insufficient privileges" : "missing dt scope for requesting client"
              )
            }
          }
        }
      }
      const services: ReadonlyArray<[string, ReadonlyArray<(typeof dtActions)[number]>]> = [
        ["svc-digital-twin", ["read", "write", "simulate"]],
        ["svc-grid", ["read"]],
        ["svc-policy", ["read", "write", "simulate", "admin"]],
        ["svc-no-scopes", []]
      ]
      for (const [name, granted] of services) {
        const token = yield* mint(name)
        for (const action of dtActions) {
          const reply = yield* post("/dt/access", { token, json: { dt_id: "dso-alto-garda", action } })
          expect(reply.body, `${name} ${action}`).toMatchObject({ allowed: granted.includes(action) })
        }
      }
      // The action defaults to read.
      const viewer = yield* mint("viewer")
      expect((yield* post("/dt/access", { token: viewer, json: { dt_id: "x" } })).body).toMatchObject({
        allowed: true,
        reason: "user can read dt data"
      })
    }))

  it.effect("digital twin events: services with dt.write/dt.simulate/dt.admin; simulations need simulate", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const emit = (token: string, eventType: string, simulationState: string | null = null) =>
        Effect.map(
          post("/dt/event", { token, json: { dt_id: "dso-alto-garda", event_type: eventType, simulation_state: simulationState } }),
          (r) => r.body as { allowed: boolean; reason: string }
        )
      const twin = yield* mint("svc-digital-twin")
      expect(yield* emit(twin, "state_changed")).toMatchObject({ allowed: true, reason: "service can emit dt events" })
      expect(yield* emit(twin, "simulation", "running")).toMatchObject({
        allowed: true,
        reason: "service can emit dt simulation events"
      })
      const writer = yield* mint("svc-digital-twin", { scopes: ["dt.write"] })
      expect(yield* emit(writer, "state_changed")).toMatchObject({ allowed: true })
      expect(yield* emit(writer, "simulation", "running")).toMatchObject({
        allowed: false,
        reason: "simulation events need the dt.simulate or dt.admin scope"
      })
      expect(yield* emit(yield* mint("svc-policy"), "simulation")).toMatchObject({ allowed: true })
      expect(yield* emit(yield* mint("svc-grid"), "state_changed")).toMatchObject({
        allowed: false,
        reason: "insufficient privileges"
      })
      expect(yield* emit(yield* mint("admin"), "state_changed")).toMatchObject({
        allowed: false,
        reason: "only services may emit dt events"
      })
      // simulation_state may be omitted (null).
      const omitted = yield* post("/dt/event", { token: twin, json: { dt_id: "x", event_type: "state_changed" } })
      expect(omitted.body).toMatchObject({ allowed: true })
    }))

  it.effect("user data: owner, sharing, public dashboards, admins and services", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const mint = yield* tokens
      const idOf = (name: string) => idp.identities.users.get(name)!.id
      const owner = idOf("viewer")
      const access = (token: string, body: Record<string, unknown>) =>
        Effect.map(
          post("/userdata/access", {
            token,
            json: { resource_type: "dashboard", resource_id: "dash-1", owner_id: owner, ...body }
          }),
          (r) => r.body as { allowed: boolean; reason: string }
        )
      const viewer = yield* mint("viewer")
      expect(yield* access(viewer, { action: "read" })).toMatchObject({ allowed: true, reason: "user accessing own data" })
      expect(yield* access(viewer, { action: "write" })).toMatchObject({ allowed: true, reason: "user modifying own data" })
      expect(yield* access(viewer, { action: "delete" })).toMatchObject({ allowed: true, reason: "user deleting own data" })
      expect(yield* access(viewer, { action: "share" })).toMatchObject({ allowed: true, reason: "owner can share resource" })
      expect(yield* access(viewer, {})).toMatchObject({ allowed: true, reason: "user accessing own data" })

      const readOnlyClient = yield* mint("viewer", { scopes: ["userdata.read"] })
      expect(yield* access(readOnlyClient, { action: "read" })).toMatchObject({ allowed: true })
      expect(yield* access(readOnlyClient, { action: "write" })).toMatchObject({
        allowed: false,
        reason: "missing userdata.write scope for requesting client"
      })
      expect(yield* access(yield* mint("viewer", { scopes: [] }), { action: "read" })).toMatchObject({
        allowed: false,
        reason: "missing userdata scope for requesting client"
      })

      const editor = yield* mint("editor")
      expect(yield* access(editor, { action: "read" })).toMatchObject({ allowed: false, reason: "not resource owner" })
      expect(yield* access(editor, { action: "read", shared_with: [idOf("editor")] })).toMatchObject({
        allowed: true,
        reason: "resource shared with user"
      })
      expect(yield* access(editor, { action: "write", shared_with: [idOf("editor")] })).toMatchObject({
        allowed: false,
        reason: "shared resources are read-only"
      })
      expect(yield* access(editor, { action: "read", shared_with_groups: ["editors"] })).toMatchObject({
        allowed: true,
        reason: "resource shared with user"
      })
      expect(yield* access(editor, { action: "read", shared_with_groups: ["managers"] })).toMatchObject({ allowed: false })
      expect(yield* access(editor, { action: "read", visibility: "public" })).toMatchObject({
        allowed: true,
        reason: "public dashboard readable"
      })
      expect(yield* access(editor, { action: "write", visibility: "public" })).toMatchObject({
        allowed: false,
        reason: "public dashboards are read-only"
      })
      expect(yield* access(editor, { action: "read", visibility: "public", resource_type: "profile" })).toMatchObject({
        allowed: false,
        reason: "not resource owner"
      })

      const admin = yield* mint("admin")
      for (const action of ["read", "write", "delete"]) {
        expect(yield* access(admin, { action })).toMatchObject({ allowed: true, reason: "admin override" })
      }
      expect(yield* access(admin, { action: "share" })).toMatchObject({ allowed: false, reason: "not resource owner" })
      const adminWithoutOverride = yield* mint("admin", { scopes: ["userdata.read", "userdata.write"] })
      expect(yield* access(adminWithoutOverride, { action: "write" })).toMatchObject({
        allowed: false,
        reason: "not resource owner"
      })
      // An owner is never blocked for lacking a group.
      const nogroup = yield* mint("nogroup")
      expect(yield* access(nogroup, { owner_id: idOf("nogroup"), action: "write" })).toMatchObject({ allowed: true })

      const nudging = yield* mint("svc-nudging")
      expect(yield* access(nudging, { action: "read" })).toMatchObject({ allowed: true, reason: "service access granted" })
      expect(yield* access(nudging, { action: "write" })).toMatchObject({ allowed: false, reason: "insufficient service scope" })
      const gateway = yield* mint("svc-participant-gateway")
      expect(yield* access(gateway, { action: "write" })).toMatchObject({ allowed: true })
      expect(yield* access(gateway, { action: "delete" })).toMatchObject({ allowed: false })
      const policy = yield* mint("svc-policy")
      expect(yield* access(policy, { action: "delete" })).toMatchObject({ allowed: true })
      expect(yield* access(policy, { action: "share" })).toMatchObject({
        allowed: false,
        reason: "services cannot share user data"
      })
    }))

  it.effect("/authorize routes by resource type and answers 400 for an unknown one", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const admin = yield* mint("admin")
      const authorize = (body: unknown) => post("/authorize", { token: admin, json: body })
      const routed: ReadonlyArray<[unknown, string]> = [
        [{ resource: { type: "dataset", id: "d", attributes: { access_level: "restricted" } }, action: { name: "write" } }, "user has admin access and client has dataset.admin scope"],
        [{ resource: { type: "pipeline", id: "p" }, action: { name: "transition", context: { from_state: "running", to_state: "completed" } } }, "valid state transition authorized"],
        [{ resource: { type: "dt", id: "t" }, action: { name: "admin" } }, "admin access granted"],
        [{ resource: { type: "topic", id: "rec/system/alerts/high" }, action: { name: "publish" } }, "authorized"],
        [{ resource: { type: "userdata", id: "u", attributes: { owner_id: "someone", resource_type: "settings" } }, action: { name: "delete" } }, "admin override"]
      ]
      for (const [body, reason] of routed) {
        const reply = yield* authorize(body)
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({ allowed: true, reason })
      }
      const unknown = yield* authorize({ resource: { type: "printer", id: "p1" }, action: { name: "print" } })
      expect(unknown.status).toBe(400)
      expect(unknown.body).toEqual({ detail: "Unknown resource type: printer" })
      // Denials are answers, not errors.
      const viewer = yield* mint("viewer")
      const denied = yield* post("/authorize", {
        token: viewer,
        json: { resource: { type: "dataset", id: "d", attributes: { access_level: "restricted" } }, action: { name: "read" } }
      })
      expect(denied.status).toBe(200)
      expect(denied.body).toMatchObject({ allowed: false, reason: "insufficient group privileges" })
    }))

  it.effect("one audit record per decision: ids, source, outcome, latency; never tokens or claims", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const token = yield* mint("editor")
      const from = logs.length
      const reply = yield* post("/dataset/access", {
        token,
        headers: { "x-request-id": "audit-test-1", "x-source-service": "grid-gateway" },
        json: { dataset_id: "meters-2024", access_level: "internal", action: "write" }
      })
      expect(reply.body).toMatchObject({ allowed: true, request_id: "audit-test-1" })
      const records = auditSince(from)
      expect(records).toHaveLength(1)
      const record = records[0]!
      expect(record.level).toBe("INFO")
      expect(record.fields).toMatchObject({
        source_service: "grid-gateway",
        subject_id: (yield* DevIdp).identities.users.get("editor")!.id,
        subject_type: "user",
        package: "rec.dataset.access",
        resource_type: "dataset",
        resource_id: "meters-2024",
        action: "write",
        allowed: true,
        reason: "user has editor access and client has dataset.admin scope",
        cached: false
      })
      expect(typeof record.fields.latency_ms).toBe("number")
      const text = JSON.stringify(record)
      expect(text).not.toContain(token)
      expect(text).not.toContain("claims")
      expect(text).not.toContain("@rec.example")

      // The same question again, with another request id: a cache hit, audited as such.
      yield* post("/dataset/access", {
        token,
        headers: { "x-request-id": "audit-test-2" },
        json: { dataset_id: "meters-2024", access_level: "internal", action: "write" }
      })
      expect(auditSince(from)[1]?.fields).toMatchObject({ cached: true, source_service: null })
    }))
})
