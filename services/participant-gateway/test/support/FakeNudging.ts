/**
 * A nudging service kept in memory, for the gateway's tests, in two forms over one state:
 *
 * - `clientLayer(state)`: the gateway's own `NudgingClient` replaced (handler tests);
 * - `serve(state)`: the nudging service's contract (`@rec/nudging-service`'s `Api`) served on a
 *   random port by small `HttpApiBuilder.group` fakes, verifying the forwarded token with the dev
 *   identity provider, so the gateway's real typed client is exercised end to end.
 *
 * Both behave as the nudging contract says for what the gateway uses: a user sees and changes
 * only their own data (another user's notification is a 404, another user's preferences a 403),
 * notifications are listed newest first without deleted ones. `fail(operation, ...)` makes an
 * operation answer an error status or never answer, and `calls` records what was asked.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServer from "@effect/platform/HttpServer"
import { Authentication } from "@rec/auth"
import { decodePayload } from "@rec/dev-idp"
import { Clients } from "@rec/participant-gateway-service"
import { Api as NudgingApi, type Domain as Nudging } from "@rec/nudging-service"
import { ServiceKit, Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { type Failure, failWith, type Outcome, servedUrl, type Verifier } from "./Fakes.js"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export type Operation =
  | "list_notifications"
  | "mark_read"
  | "delete_notification"
  | "get_preferences"
  | "put_preferences"
  | "vapid_public_key"
  | "subscribe"
  | "unsubscribe"

export const vapidPublicKey = "BPz4D3kV2wV0yTt0wQ9G9wI3d1k6n8x6pKc0b1f8mQ2cYx9p7v1u0Jm3oQe7rN5s2aT4yU6iO8pA0sD2fG4hJ6k"

const key = (user: string, community: string) => `${user}\u0000${community}`

let sequence = 0
const nextId = (prefix: string) => `${prefix}-${++sequence}`

export class NudgingState {
  readonly notifications = new Map<string, Mutable<Nudging.Notification> & { deleted: boolean }>()
  readonly preferences = new Map<string, Nudging.Preferences>()
  readonly subscriptions = new Map<string, Mutable<Nudging.PushSubscription> & { endpoint: string }>()
  readonly calls: Array<{ readonly operation: Operation; readonly user: string | undefined; readonly input?: unknown }> = []
  private readonly failures = new Map<Operation, Failure | "hang">()
  /** Run once, just before the operation answers (through `clientLayer`): to change the world meanwhile. */
  readonly before = new Map<Operation, Effect.Effect<void>>()

  /** Makes `operation` answer `failure` (or never answer) until `heal`. */
  fail(operation: Operation, failure: Failure | "hang"): void {
    this.failures.set(operation, failure)
  }

  heal(): void {
    this.failures.clear()
  }

  failureOf(operation: Operation): Failure | "hang" | undefined {
    return this.failures.get(operation)
  }

  /** Adds a notification of `user` in `community` (`created_at` orders the list). */
  notify(user: string, community: string | null, fields: Partial<Nudging.Notification> = {}): Nudging.Notification {
    const id = fields.id ?? nextId("n")
    const n: Mutable<Nudging.Notification> & { deleted: boolean } = {
      id,
      rule_id: "imported_up",
      event_type: "imported_up",
      scenario: "imported_up",
      user_id: user,
      community_id: community,
      family: "consumption",
      type: "informative",
      severity: "info",
      kind: "consumption",
      language: "it",
      title: `Titolo ${id}`,
      body: `Testo ${id}`,
      url: "/overview",
      status: "dispatched",
      reason: null,
      duplicate_of: null,
      dedup_window: "daily",
      window_bucket: "2026-05-03",
      deliveries: [],
      created_at: new Date(Date.UTC(2026, 4, 3, 8, 0, this.notifications.size)).toISOString(),
      read_at: null,
      clicked_at: null,
      click_action: null,
      ...fields,
      deleted: false
    }
    this.notifications.set(id, n)
    return n
  }

  private record(operation: Operation, user: string | undefined, input?: unknown) {
    this.calls.push({ operation, user, input })
  }

  callsOf(operation: Operation) {
    return this.calls.filter((c) => c.operation === operation)
  }

  // --- the operations, as the nudging service answers them -----------------------------------

  list(user: string, params: typeof Nudging.ListNotificationsParams.Type): Outcome<Nudging.NotificationPage> {
    this.record("list_notifications", user, params)
    if (params.user_id !== user) return Either.left({ status: 403, detail: "Not allowed: not the owner of this data" })
    const mine = [...this.notifications.values()]
      .filter((n) => !n.deleted && n.user_id === user && (n.community_id ?? "") === params.community_id)
      .filter((n) => !params.unread || n.read_at === null)
      .filter((n) => n.status !== "deduplicated")
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
    return Either.right({
      items: mine.slice(params.offset, params.offset + params.limit).map(({ deleted: _, ...n }) => n),
      total: mine.length,
      limit: params.limit,
      offset: params.offset
    })
  }

  private own(user: string, id: string): Outcome<Mutable<Nudging.Notification> & { deleted: boolean }> {
    const n = this.notifications.get(id)
    return n === undefined || n.deleted || n.user_id !== user
      ? Either.left({ status: 404, detail: `No notification ${id}` })
      : Either.right(n)
  }

  markRead(user: string, id: string): Outcome<Nudging.Notification> {
    this.record("mark_read", user, id)
    return Either.map(this.own(user, id), (n) => {
      n.read_at ??= new Date().toISOString()
      const { deleted: _, ...rest } = n
      return rest
    })
  }

  remove(user: string, id: string): Outcome<void> {
    this.record("delete_notification", user, id)
    return Either.map(this.own(user, id), (n) => {
      n.deleted = true
    })
  }

  getPreferences(user: string, params: typeof Nudging.PreferencesQuery.Type): Outcome<Nudging.Preferences> {
    this.record("get_preferences", user, params)
    if (params.user_id !== user) return Either.left({ status: 403, detail: "Not allowed: not the owner of this data" })
    return Either.right(
      this.preferences.get(key(user, params.community_id)) ?? {
        user_id: user,
        community_id: params.community_id,
        language: "it",
        max_per_day: 5,
        enabled: true,
        disabled_kinds: [],
        email_enabled: false,
        email: null,
        stored: false,
        updated_at: null
      }
    )
  }

  putPreferences(user: string, update: Nudging.PreferencesUpdate): Outcome<Nudging.Preferences> {
    this.record("put_preferences", user, update)
    if (update.user_id !== user) return Either.left({ status: 403, detail: "Not allowed: not the owner of this data" })
    const current = Either.getOrThrow(this.getPreferences(user, { user_id: user, community_id: update.community_id }))
    this.calls.pop()
    const next: Nudging.Preferences = {
      ...current,
      language: update.language ?? current.language,
      max_per_day: update.max_per_day ?? current.max_per_day,
      enabled: update.enabled ?? current.enabled,
      stored: true,
      updated_at: new Date().toISOString()
    }
    this.preferences.set(key(user, update.community_id), next)
    return Either.right(next)
  }

  subscribe(user: string, request: Nudging.SubscribeRequest): Outcome<Nudging.PushSubscription> {
    this.record("subscribe", user, request)
    if (request.user_id !== user) return Either.left({ status: 403, detail: "Not allowed: not the owner of this data" })
    const k = key(user, request.subscription.endpoint)
    const now = new Date().toISOString()
    const existing = this.subscriptions.get(k)
    const subscription = {
      id: existing?.id ?? nextId("s"),
      user_id: user,
      community_id: request.community_id,
      endpoint_origin: URL.canParse(request.subscription.endpoint) ? new URL(request.subscription.endpoint).origin : "unknown",
      enabled: true,
      disabled_reason: null,
      created_at: existing?.created_at ?? now,
      updated_at: now,
      endpoint: request.subscription.endpoint
    }
    this.subscriptions.set(k, subscription)
    const { endpoint: _, ...answer } = subscription
    return Either.right(answer)
  }

  unsubscribe(user: string, request: Nudging.UnsubscribeRequest): Outcome<{ readonly removed: number }> {
    this.record("unsubscribe", user, request)
    if (request.user_id !== user) return Either.left({ status: 403, detail: "Not allowed: not the owner of this data" })
    let removed = 0
    for (const s of this.subscriptions.values()) {
      if (s.user_id === user && s.enabled && (request.endpoint === undefined || s.endpoint === request.endpoint)) {
        s.enabled = false
        removed++
      }
    }
    return Either.right({ removed })
  }

  enabledSubscriptions(user: string): number {
    return [...this.subscriptions.values()].filter((s) => s.user_id === user && s.enabled).length
  }
}

const subOf = (token: Redacted.Redacted): string => {
  const payload = decodePayload(Redacted.value(token)) as { sub?: unknown } | undefined
  return typeof payload?.sub === "string" ? payload.sub : "unknown"
}

/** The gateway's `NudgingClient`, replaced by `state` (the token's `sub` is the caller). */
export const clientLayer = (state: NudgingState): Layer.Layer<Clients.NudgingClient> => {
  const run = <A>(operation: Operation, token: Redacted.Redacted, outcome: (user: string) => Outcome<A>) =>
    Effect.suspend(() => {
      const hook = state.before.get(operation)
      state.before.delete(operation)
      return hook ?? Effect.void
    }).pipe(Effect.zipRight(Effect.suspend(() => {
      const failure = state.failureOf(operation)
      if (failure === "hang") return Effect.never
      if (failure !== undefined) {
        state.calls.push({ operation, user: subOf(token) })
        return Effect.fail(Upstream.answered("nudging service", operation, failure.status, failure.detail))
      }
      return Either.match(outcome(subOf(token)), {
        onLeft: (f) => Effect.fail(Upstream.answered("nudging service", operation, f.status, f.detail)),
        onRight: Effect.succeed
      })
    })))
  return Layer.succeed(Clients.NudgingClient, {
    listNotifications: (token, params) => run("list_notifications", token, (user) => state.list(user, params)),
    markRead: (token, id) => run("mark_read", token, (user) => state.markRead(user, id)),
    deleteNotification: (token, id) => run("delete_notification", token, (user) => state.remove(user, id)),
    preferences: (token, user_id, community_id) =>
      run("get_preferences", token, (user) => state.getPreferences(user, { user_id, community_id })),
    putPreferences: (token, update) => run("put_preferences", token, (user) => state.putPreferences(user, update)),
    vapidPublicKey: (token) =>
      run("vapid_public_key", token, () => Either.right({ public_key: vapidPublicKey })),
    subscribe: (token, request) => run("subscribe", token, (user) => state.subscribe(user, request)),
    unsubscribe: (token, request) => run("unsubscribe", token, (user) => state.unsubscribe(user, request))
  })
}

// --- the contract, served ----------------------------------------------------------------------

const caller = Effect.map(Authentication.CurrentSubject, (s) => s.id)

const answer = <A>(state: NudgingState, operation: Operation, outcome: (user: string) => Outcome<A>) =>
  Effect.flatMap(caller, (user) => {
    const failure = state.failureOf(operation)
    if (failure === "hang") return Effect.never
    if (failure !== undefined) {
      state.calls.push({ operation, user })
      return failWith(failure)
    }
    return Either.match(outcome(user), { onLeft: failWith, onRight: Effect.succeed })
  })

const unused = (what: string) => () => Effect.dieMessage(`the participant gateway does not call ${what}`)

const groups = (state: NudgingState) =>
  Layer.mergeAll(
    HttpApiBuilder.group(NudgingApi, "notifications", (h) =>
      h
        .handle("list", ({ urlParams }) => answer(state, "list_notifications", (u) => state.list(u, urlParams)))
        .handle("get", unused("GET /notifications/{id}"))
        .handle("markRead", ({ path }) => answer(state, "mark_read", (u) => state.markRead(u, path.id)))
        .handle("delete", ({ path }) => answer(state, "delete_notification", (u) => state.remove(u, path.id)))),
    HttpApiBuilder.group(NudgingApi, "preferences", (h) =>
      h
        .handle("get", ({ urlParams }) => answer(state, "get_preferences", (u) => state.getPreferences(u, urlParams)))
        .handle("put", ({ payload }) => answer(state, "put_preferences", (u) => state.putPreferences(u, payload)))
        .handle("kinds", unused("GET /preferences/kinds"))),
    HttpApiBuilder.group(NudgingApi, "webpush", (h) =>
      h
        .handle("subscribe", ({ payload }) => answer(state, "subscribe", (u) => state.subscribe(u, payload)))
        .handle("unsubscribe", ({ payload }) => answer(state, "unsubscribe", (u) => state.unsubscribe(u, payload)))
        .handle("sendTest", unused("POST /webpush/send-test"))),
    HttpApiBuilder.group(NudgingApi, "public", (h) =>
      h
        .handle("vapidPublicKey", () => {
          const failure = state.failureOf("vapid_public_key")
          if (failure === "hang") return Effect.never
          return failure !== undefined ? failWith(failure) : Effect.succeed({ public_key: vapidPublicKey })
        })
        .handle("trackClick", unused("GET /track/click"))),
    HttpApiBuilder.group(NudgingApi, "ingest", (h) =>
      h
        .handle("ingestEvent", unused("POST /ingest-event"))
        .handle("adminIngestEvent", unused("POST /admin/ingest-event"))
        .handle("ingestBatch", unused("POST /ingest-events/batch"))),
    HttpApiBuilder.group(NudgingApi, "scheduled", (h) =>
      h
        .handle("schedule", unused("POST /scheduled-events"))
        .handle("adminSchedule", unused("POST /admin/scheduled-events"))
        .handle("scheduleBatch", unused("POST /scheduled-events/batch"))
        .handle("get", unused("GET /scheduled-events/{key}"))
        .handle("cancel", unused("DELETE /scheduled-events/{key}")))
  )

/** The nudging contract served by `state` on a random port; answers its base URL. */
export const serve = (state: NudgingState, verifier: Verifier) =>
  servedUrl(
    ServiceKit.serveTest(NudgingApi, { service: { name: "fake-nudging", version: "0.0.0" }, port: 0, accessLog: false }).pipe(
      Layer.provide(groups(state)),
      Layer.provide(Authentication.layer),
      Layer.provide(verifier)
    ) as Layer.Layer<HttpServer.HttpServer, unknown>
  )
