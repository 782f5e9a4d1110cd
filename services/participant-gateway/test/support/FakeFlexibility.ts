/**
 * A flexibility service kept in memory, as `FakeNudging` is for nudging: `clientLayer(state)`
 * replaces the gateway's `FlexibilityClient`, `serve(state)` serves the flexibility contract with
 * small group fakes verifying the forwarded token. A user sees only their own suggestions and
 * commitments (another user's commitment is a 404), lists are newest first with the full total.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServer from "@effect/platform/HttpServer"
import { Authentication } from "@rec/auth"
import { decodePayload } from "@rec/dev-idp"
import { Api as FlexibilityApi, type Domain as Flexibility } from "@rec/flexibility-service"
import { Clients } from "@rec/participant-gateway-service"
import { ServiceKit, Upstream } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import { type Failure, failWith, type Outcome, servedUrl, type Verifier } from "./Fakes.js"

export type Operation =
  | "list_suggestions"
  | "respond"
  | "list_commitments"
  | "create_commitment"
  | "get_commitment"
  | "cancel_commitment"

export const suggestion = (id: string, start: string, end: string): Flexibility.Suggestion => ({
  id,
  suggestion_type: "shift-consumption",
  period_start: start,
  period_end: end,
  to_is_tomorrow: false,
  from_period: "",
  clock_range: `${start.slice(11, 16)}–${end.slice(11, 16)}`,
  to_period: "midday",
  to_time: start.slice(11, 16),
  impact_kwh_estimated: 1.2,
  reward_points: 12,
  confidence: 0.8
})

export class FlexibilityState {
  readonly suggestions = new Map<string, Array<Flexibility.Suggestion>>()
  readonly commitments = new Map<string, Flexibility.Commitment>()
  readonly calls: Array<{ readonly operation: Operation; readonly user: string; readonly input?: unknown }> = []
  private readonly failures = new Map<Operation, Failure | "hang">()

  fail(operation: Operation, failure: Failure | "hang"): void {
    this.failures.set(operation, failure)
  }

  heal(): void {
    this.failures.clear()
  }

  failureOf(operation: Operation): Failure | "hang" | undefined {
    return this.failures.get(operation)
  }

  /** A commitment of `user` (newest last by `committed_at`). */
  add(user: string, fields: Partial<Flexibility.Commitment> = {}): Flexibility.Commitment {
    const c: Flexibility.Commitment = {
      id: randomUUID(),
      user_id: user,
      suggestion_id: `w-${this.commitments.size + 1}`,
      suggestion_type: "shift-consumption",
      community_id: "it-energy-community",
      device_id: "member-giulia-meter",
      period_start: "2026-05-03T10:00:00.000Z",
      period_end: "2026-05-03T12:00:00.000Z",
      committed_at: new Date(Date.UTC(2026, 4, 3, 9, 0, this.commitments.size)).toISOString(),
      settled_at: null,
      reminded_at: null,
      cancelled_at: null,
      status: "committed",
      reward_points_estimated: 10,
      reward_points_actual: null,
      actual_kwh: null,
      ...fields
    }
    this.commitments.set(c.id, c)
    return c
  }

  private record(operation: Operation, user: string, input?: unknown) {
    this.calls.push({ operation, user, input })
  }

  callsOf(operation: Operation) {
    return this.calls.filter((c) => c.operation === operation)
  }

  listSuggestions(user: string): Outcome<ReadonlyArray<Flexibility.Suggestion>> {
    this.record("list_suggestions", user)
    return Either.right(this.suggestions.get(user) ?? [])
  }

  respond(user: string, id: string, request: Flexibility.RespondRequest): Outcome<Flexibility.RespondResponse> {
    this.record("respond", user, { id, request })
    const s = (this.suggestions.get(user) ?? []).find((x) => x.id === id)
    if (s === undefined) return Either.left({ status: 404, detail: `No open flexibility window ${id}` })
    if (request.response === "declined") return Either.right({ commitment_id: null, status: "declined", reward_points_estimated: 0 })
    if ([...this.commitments.values()].some((c) => c.user_id === user && c.suggestion_id === id && c.status === "committed")) {
      return Either.left({ status: 409, detail: `Already committed to ${id}` })
    }
    const c = this.add(user, {
      suggestion_id: id,
      period_start: s.period_start,
      period_end: s.period_end,
      reward_points_estimated: request.reward_points ?? s.reward_points
    })
    return Either.right({ commitment_id: c.id, status: "committed", reward_points_estimated: c.reward_points_estimated })
  }

  list(user: string, params: Flexibility.ListParams): Outcome<Flexibility.CommitmentPage> {
    this.record("list_commitments", user, params)
    if (params.user_id !== undefined && params.user_id !== user) {
      return Either.left({ status: 403, detail: "Not allowed: users list their own commitments" })
    }
    const mine = [...this.commitments.values()]
      .filter((c) => c.user_id === user && (params.status === undefined || c.status === params.status))
      .sort((a, b) => b.committed_at.localeCompare(a.committed_at))
    return Either.right({
      items: mine.slice(params.offset, params.offset + params.limit),
      total: mine.length,
      limit: params.limit,
      offset: params.offset
    })
  }

  create(user: string, request: Flexibility.CreateCommitment): Outcome<Flexibility.Commitment> {
    this.record("create_commitment", user, request)
    if (request.user_id !== undefined && request.user_id !== user) {
      return Either.left({ status: 403, detail: "Not allowed: users commit only themselves" })
    }
    return Either.right(this.add(user, {
      suggestion_id: request.suggestion_id,
      suggestion_type: request.suggestion_type ?? "shift-consumption",
      period_start: DateTime.formatIso(request.period_start),
      period_end: DateTime.formatIso(request.period_end),
      reward_points_estimated: request.reward_points_estimated ?? 0
    }))
  }

  private own(user: string, id: string): Outcome<Flexibility.Commitment> {
    const c = this.commitments.get(id)
    return c === undefined || c.user_id !== user ? Either.left({ status: 404, detail: `No commitment ${id}` }) : Either.right(c)
  }

  get(user: string, id: string): Outcome<Flexibility.Commitment> {
    this.record("get_commitment", user, id)
    return this.own(user, id)
  }

  cancel(user: string, id: string): Outcome<void> {
    this.record("cancel_commitment", user, id)
    return Either.flatMap(this.own(user, id), (c) => {
      if (c.status !== "committed") return Either.left({ status: 409, detail: `Commitment ${id} is ${c.status}` })
      this.commitments.set(id, { ...c, status: "cancelled", cancelled_at: new Date().toISOString() })
      return Either.right(undefined)
    })
  }
}

const subOf = (token: Redacted.Redacted): string => {
  const payload = decodePayload(Redacted.value(token)) as { sub?: unknown } | undefined
  return typeof payload?.sub === "string" ? payload.sub : "unknown"
}

/** The gateway's `FlexibilityClient`, replaced by `state`. */
export const clientLayer = (state: FlexibilityState): Layer.Layer<Clients.FlexibilityClient> => {
  const run = <A>(operation: Operation, token: Redacted.Redacted, outcome: (user: string) => Outcome<A>) =>
    Effect.suspend(() => {
      const failure = state.failureOf(operation)
      if (failure === "hang") return Effect.never
      const result = failure !== undefined ? Either.left(failure) : outcome(subOf(token))
      return Either.match(result, {
        onLeft: (f) => Effect.fail(Upstream.answered("flexibility service", operation, f.status, f.detail)),
        onRight: Effect.succeed
      })
    })
  return Layer.succeed(Clients.FlexibilityClient, {
    suggestions: (token) => run("list_suggestions", token, (u) => state.listSuggestions(u)),
    respond: (token, id, payload) => run("respond", token, (u) => state.respond(u, id, payload)),
    commitments: (token, params) => run("list_commitments", token, (u) => state.list(u, params)),
    commit: (token, payload) => run("create_commitment", token, (u) => state.create(u, payload)),
    commitment: (token, id) => run("get_commitment", token, (u) => state.get(u, id)),
    cancel: (token, id) => run("cancel_commitment", token, (u) => state.cancel(u, id))
  })
}

const answer = <A>(state: FlexibilityState, operation: Operation, outcome: (user: string) => Outcome<A>) =>
  Effect.flatMap(Authentication.CurrentSubject, (subject) => {
    const failure = state.failureOf(operation)
    if (failure === "hang") return Effect.never
    return Either.match(failure !== undefined ? Either.left(failure) : outcome(subject.id), {
      onLeft: failWith,
      onRight: Effect.succeed
    })
  })

const unused = (what: string) => () => Effect.dieMessage(`the participant gateway does not call ${what}`)

const groups = (state: FlexibilityState) =>
  Layer.mergeAll(
    HttpApiBuilder.group(FlexibilityApi, "suggestions", (h) =>
      h
        .handle("list", () => answer(state, "list_suggestions", (u) => state.listSuggestions(u)))
        .handle("respond", ({ path, payload }) => answer(state, "respond", (u) => state.respond(u, path.id, payload)))),
    HttpApiBuilder.group(FlexibilityApi, "commitments", (h) =>
      h
        .handle("create", ({ payload }) => answer(state, "create_commitment", (u) => state.create(u, payload)))
        .handle("list", ({ urlParams }) => answer(state, "list_commitments", (u) => state.list(u, urlParams)))
        .handle("pending", unused("GET /api/commitments/pending"))
        .handle("export", unused("GET /api/commitments/export"))
        .handle("get", ({ path }) => answer(state, "get_commitment", (u) => state.get(u, path.id)))
        .handle("cancel", ({ path }) => answer(state, "cancel_commitment", (u) => state.cancel(u, path.id)))
        .handle("settle", unused("PATCH /api/commitments/{id}/settle")))
  )

/** The flexibility contract served by `state` on a random port; answers its base URL. */
export const serve = (state: FlexibilityState, verifier: Verifier) =>
  servedUrl(
    ServiceKit.serveTest(FlexibilityApi, { service: { name: "fake-flexibility", version: "0.0.0" }, port: 0, accessLog: false })
      .pipe(
        Layer.provide(groups(state)),
        Layer.provide(Authentication.layer),
        Layer.provide(verifier)
      ) as Layer.Layer<HttpServer.HttpServer, unknown>
  )
