/**
 * The production `Nudges` and `Communities` layers (typed clients of the nudging service's and
 * the registry's contracts, with svc-flexibility's client-credentials token) over real HTTP,
 * against servers speaking those contracts (the contracts' own groups with handlers written
 * here, until the services themselves can be started in tests): the nudging service's answers
 * become outcomes, refusals and failures become `UpstreamFailure`s with the platform's
 * statuses, the registry's pages are all read and only active members with a user count, and
 * the opportunity broadcast reaches the nudging server once for every member of two communities.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, layer } from "@effect/vitest"
import { Authentication } from "@rec/auth"
import { DevIdp } from "@rec/dev-idp"
import { SimulatorSynthetic, SimulatorWorld } from "@rec/digital-twin"
import { IngestGroup, ScheduledGroup } from "@rec/nudging-service/Api"
import * as NudgingDomain from "@rec/nudging-service/Domain"
import { Contract, HttpErrors, ServiceKit } from "@rec/platform"
import { RegistryGroup } from "@rec/registry-service/Api"
import type * as RegistryDomain from "@rec/registry-service/Domain"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Background } from "../src/Background.js"
import { Communities } from "../src/Communities.js"
import * as NudgingClient from "../src/NudgingClient.js"
import { Nudges } from "../src/Nudges.js"
import { PipelineReactions } from "../src/PipelineListener.js"
import * as RegistryClient from "../src/RegistryClient.js"
import { clientTokens, community, serviceLayer, verifierFor } from "./support/Harness.js"

// ---------------------------------------------------------------------------------------------
// A server speaking the nudging service's ingest and scheduling contract

interface NudgingState {
  readonly ingested: Array<NudgingDomain.IngestEvent>
  readonly scheduled: Array<NudgingDomain.ScheduleRequest>
  readonly cancelled: Array<string>
  /** What ingest answers, by event type (default dispatched). */
  answer: (event: NudgingDomain.IngestEvent) => "dispatched" | "suppressed" | "none" | "deduplicated" | "invalid" | "broken"
}

class NudgingServer extends Context.Tag("test/NudgingServer")<NudgingServer, { readonly url: string; readonly state: NudgingState }>() {}

class NudgingFakeApi extends Contract.make("nudging").add(IngestGroup).add(ScheduledGroup) {}

const outcomes = (event: NudgingDomain.IngestEvent) => ({
  event_type: event.event_type,
  user_id: event.user_id ?? "nobody",
  community_id: event.community_id ?? null,
  outcomes: []
})

const nudgingHandlers = (state: NudgingState) => {
  type IngestAnswer = Effect.Effect<
    NudgingDomain.IngestDispatched | NudgingDomain.IngestSuppressed | NudgingDomain.NoMatchingRule,
    NudgingDomain.IngestDeduplicated | NudgingDomain.IngestInvalidFacts | HttpErrors.InternalServerError
  >
  const ingest = ({ payload }: { readonly payload: NudgingDomain.IngestEvent }): IngestAnswer =>
    Effect.suspend((): IngestAnswer => {
      state.ingested.push(payload)
      switch (state.answer(payload)) {
        case "dispatched":
          return Effect.succeed({ result: "dispatched" as const, ...outcomes(payload) })
        case "suppressed":
          return Effect.succeed({ result: "suppressed" as const, ...outcomes(payload) })
        case "none":
          return Effect.succeed(new NudgingDomain.NoMatchingRule())
        case "deduplicated":
          return Effect.fail(new NudgingDomain.IngestDeduplicated({ detail: "already sent today", ...outcomes(payload) }))
        case "invalid":
          return Effect.fail(new NudgingDomain.IngestInvalidFacts({ detail: "facts.period is missing", ...outcomes(payload) }))
        case "broken":
          return Effect.fail(new HttpErrors.InternalServerError({ detail: "database down" }))
      }
    })
  const schedule = ({ payload }: { readonly payload: NudgingDomain.ScheduleRequest }) =>
    Effect.sync(() => {
      state.scheduled.push(payload)
      const now = new Date().toISOString()
      return {
        created: true as const,
        event: {
          id: String(state.scheduled.length),
          external_key: payload.external_key ?? null,
          event_type: payload.event_type,
          user_id: payload.user_id ?? null,
          community_id: payload.community_id ?? null,
          trigger_at: payload.trigger_at,
          facts: payload.facts,
          status: "pending" as const,
          http_status: null,
          outcomes: [],
          last_error: null,
          created_at: now,
          updated_at: now,
          dispatched_at: null
        }
      }
    })
  return Layer.mergeAll(
    HttpApiBuilder.group(NudgingFakeApi, "ingest", (handlers) =>
      handlers.handle("ingestEvent", ingest).handle("adminIngestEvent", ingest).handle("ingestBatch", ({ payload }) =>
        Effect.sync(() => ({
          results: payload.events.map((event) => {
            state.ingested.push(event)
            const status = ({ dispatched: 200, suppressed: 202, none: 204, deduplicated: 409, invalid: 422, broken: 422 } as const)[
              state.answer(event)
            ]
            return { status, ...outcomes(event), user_id: event.user_id ?? "nobody", detail: status === 422 ? "facts.period is missing" : "" }
          })
        })))),
    HttpApiBuilder.group(NudgingFakeApi, "scheduled", (handlers) =>
      handlers
        .handle("schedule", schedule)
        .handle("adminSchedule", schedule)
        .handle("scheduleBatch", ({ payload }) =>
          Effect.sync(() => {
            state.scheduled.push(...payload.events)
            return {
              created: payload.events.length,
              replaced: 0,
              events: payload.events.map((e, i) => ({ id: `b-${i}`, external_key: e.external_key ?? null, created: true }))
            }
          }))
        .handle("get", ({ path }) => Effect.fail(new HttpErrors.NotFound({ detail: `No scheduled event ${path.external_key}` })))
        .handle("cancel", ({ path }) =>
          path.external_key.startsWith("sent:")
            ? Effect.fail(new HttpErrors.Conflict({ detail: "already dispatched" }))
            : path.external_key.startsWith("unknown:")
            ? Effect.fail(new HttpErrors.NotFound({ detail: "no such event" }))
            : Effect.sync(() => void state.cancelled.push(path.external_key))))
  )
}

// ---------------------------------------------------------------------------------------------
// A server speaking the registry's contract (communities and members)

class RegistryFakeApi extends Contract.make("registry").add(RegistryGroup) {}

const communityRecord = (key: string): RegistryDomain.Community => ({
  key,
  iri: `https://registry.example/communities/${key}`,
  name: key,
  description: null,
  type: null,
  owner: null,
  areas: {},
  topology: [],
  legal: null,
  links: null,
  contact: null,
  settings: null,
  member_count: 0,
  imported_at: "2026-01-01T00:00:00Z"
})

const memberRecord = (communityKey: string, userId: string, status: RegistryDomain.Member["status"]): RegistryDomain.Member => ({
  id: `${communityKey}.${userId}`,
  key: userId,
  iri: `https://registry.example/members/${communityKey}.${userId}`,
  community: communityKey,
  user_id: userId,
  name: userId,
  type: null,
  role: "prosumer",
  status,
  area: "a",
  delivery_points: [],
  asset_count: 0,
  extra: {}
})

/** Pages of `size` through an opaque cursor (the offset as text). */
const paged = <A>(items: ReadonlyArray<A>, limit: number, cursor: string | undefined) => {
  const offset = cursor === undefined ? 0 : Number(cursor)
  const next = offset + limit < items.length ? String(offset + limit) : null
  return { items: items.slice(offset, offset + limit), next_cursor: next }
}

const registryHandlers = (communities: Readonly<Record<string, ReadonlyArray<RegistryDomain.Member>>>) =>
  HttpApiBuilder.group(RegistryFakeApi, "registry", (handlers) =>
    handlers
      // Small pages, so the client must follow the cursor.
      .handle("listCommunities", ({ urlParams }) =>
        Effect.succeed(paged(Object.keys(communities).map(communityRecord), Math.min(urlParams.limit, 1), urlParams.cursor)))
      .handle("listMembers", ({ path, urlParams }) => {
        const members = communities[path.key]
        return members === undefined
          ? Effect.fail(new HttpErrors.NotFound({ detail: `No community ${path.key}` }))
          : Effect.succeed(paged(members, Math.min(urlParams.limit, 3), urlParams.cursor))
      })
      .handle("getCommunity", () => Effect.fail(new HttpErrors.NotFound({ detail: "not served here" })))
      .handle("getMember", () => Effect.fail(new HttpErrors.NotFound({ detail: "not served here" })))
      .handle("listMemberAssets", () => Effect.fail(new HttpErrors.NotFound({ detail: "not served here" })))
      .handle("listAssets", () => Effect.succeed({ items: [], next_cursor: null }))
      .handle("listSites", () => Effect.succeed({ items: [], next_cursor: null })))

// ---------------------------------------------------------------------------------------------

const second = { id: "it-second-community", members: 5 }
const registryData = {
  [community]: [
    ...SimulatorWorld.community.participants.map((p) => memberRecord(community, p.sub, "active")),
    memberRecord(community, "left-last-year", "inactive"),
    memberRecord(community, "not-yet-approved", "pending")
  ],
  [second.id]: Array.from({ length: second.members }, (_, i) =>
    memberRecord(second.id, SimulatorSynthetic.participantSub(second.id, i + 1, second.members), "active"))
}

/** A server of `api` on a random port (its own scope, so its test client does not meet others). */
const serve = <A>(served: Layer.Layer<A | HttpServer.HttpServer, unknown, DevIdp>) =>
  Effect.gen(function*() {
    const context = (yield* Layer.build(served)) as Context.Context<HttpServer.HttpServer>
    const address = Context.get(context, HttpServer.HttpServer).address
    return address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://127.0.0.1:0"
  })

const withAuth = <A, E, R>(served: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(DevIdp, (idp) => served.pipe(Layer.provide(Authentication.layer), Layer.provide(verifierFor(idp.issuer)))))

const nudgingServer = Layer.scoped(
  NudgingServer,
  Effect.gen(function*() {
    const state: NudgingState = { ingested: [], scheduled: [], cancelled: [], answer: () => "dispatched" }
    const url = yield* serve(
      withAuth(ServiceKit.serveTest(NudgingFakeApi, { service: { name: "nudging", version: "test" }, port: 0, accessLog: false }).pipe(
        Layer.provide(nudgingHandlers(state))
      ))
    )
    return { url, state }
  })
)

/** The production layers' `make`, aimed at the contract servers, with svc-flexibility's tokens. */
const realClients = Layer.unwrapScoped(
  Effect.gen(function*() {
    const nudging = yield* NudgingServer
    const registryUrl = yield* serve(
      withAuth(ServiceKit.serveTest(RegistryFakeApi, { service: { name: "registry", version: "test" }, port: 0, accessLog: false }).pipe(
        Layer.provide(registryHandlers(registryData))
      ))
    )
    const tokens = yield* clientTokens("svc-flexibility")
    const options = { tokens, timeout: "5 seconds" as const }
    return Layer.merge(
      Layer.effect(Nudges, NudgingClient.make({ ...options, name: "nudging service", baseUrl: nudging.url })),
      Layer.effect(Communities, RegistryClient.make({ ...options, name: "community registry", baseUrl: registryUrl }))
    ).pipe(Layer.provide(FetchHttpClient.layer))
  })
)

const setup = serviceLayer<Nudges | Communities>({
  simulator: { syntheticCommunities: [second] },
  nudges: Layer.effect(Nudges, Nudges),
  communities: Layer.effect(Communities, Communities)
}).pipe(Layer.provide(realClients), Layer.provideMerge(nudgingServer), Layer.provideMerge(DevIdp.layerTest))

const event = (facts: Record<string, string> = {}) => ({
  event_type: "flexibility_reminder",
  user_id: "u-1",
  community_id: community,
  facts: { facts_version: "1.0", scenario: "flexibility_reminder", period: "2026-08-17", ...facts }
})

layer(setup, { excludeTestServices: true, timeout: "90 seconds" })("typed clients of the nudging service and the registry", (it) => {
  describe("Nudges", () => {
    it.effect("maps the nudging service's answers to outcomes, and its refusals to the platform's statuses", () =>
      Effect.gen(function*() {
        const { state } = yield* NudgingServer
        const nudges = yield* Nudges
        const answers = ["dispatched", "suppressed", "none", "deduplicated"] as const
        const expected = ["delivered", "suppressed", "ignored", "duplicate"]
        for (const [i, answer] of answers.entries()) {
          state.answer = () => answer
          expect(yield* nudges.send(event({ commitment_id: `c-${i}` }))).toBe(expected[i])
        }
        expect(state.ingested.at(-1)).toMatchObject({ event_type: "flexibility_reminder", user_id: "u-1", community_id: community })
        state.answer = () => "invalid"
        const invalid = yield* Effect.flip(nudges.send(event()))
        expect(invalid).toMatchObject({ status: 422, upstreamStatus: 422, detail: "Nudging service refused ingest_event: facts.period is missing" })
        state.answer = () => "broken"
        const broken = yield* Effect.flip(nudges.send(event()))
        expect(broken).toMatchObject({ status: 502, upstreamStatus: 500 })
        state.answer = () => "dispatched"
      }))

    it.effect("schedules with the external key and withdraws, where there is something to withdraw", () =>
      Effect.gen(function*() {
        const { state } = yield* NudgingServer
        const nudges = yield* Nudges
        yield* nudges.schedule({ ...event(), trigger_at: "2026-08-17T09:45:00.000Z", external_key: "flexibility-accept:u-1:s-1" })
        expect(state.scheduled.at(-1)).toMatchObject({ external_key: "flexibility-accept:u-1:s-1", trigger_at: "2026-08-17T09:45:00.000Z" })
        yield* nudges.unschedule("flexibility-accept:u-1:s-1")
        expect(state.cancelled).toContain("flexibility-accept:u-1:s-1")
        // Already sent, or never scheduled: nothing to withdraw, not a failure.
        yield* nudges.unschedule("sent:k")
        yield* nudges.unschedule("unknown:k")
      }))
  })

  describe("Nudges in batches", () => {
    it.effect("sendMany: one call, an outcome or a refusal per event in order", () =>
      Effect.gen(function*() {
        const { state } = yield* NudgingServer
        const nudges = yield* Nudges
        const answers: Record<string, NudgingState["answer"] extends (e: never) => infer R ? R : never> = {
          "b-0": "dispatched",
          "b-1": "suppressed",
          "b-2": "none",
          "b-3": "deduplicated",
          "b-4": "invalid"
        }
        state.answer = (e) => answers[String(e.facts["commitment_id"])] ?? "dispatched"
        const before = state.ingested.length
        const results = yield* nudges.sendMany!(Object.keys(answers).map((id) => event({ commitment_id: id })))
        state.answer = () => "dispatched"
        expect(state.ingested.length - before).toBe(5)
        expect(results.slice(0, 4)).toEqual(["delivered", "suppressed", "ignored", "duplicate"])
        expect(results[4]).toMatchObject({ _tag: "UpstreamFailure", status: 422, upstreamDetail: "facts.period is missing" })
      }))

    it.effect("scheduleMany: one call with every event and its external key", () =>
      Effect.gen(function*() {
        const { state } = yield* NudgingServer
        const nudges = yield* Nudges
        const before = state.scheduled.length
        yield* nudges.scheduleMany!(["s-a", "s-b"].map((s) => ({ ...event(), trigger_at: "2026-08-17T09:45:00.000Z", external_key: `flexibility-accept:u-1:${s}` })))
        expect(state.scheduled.slice(before).map((e) => e.external_key)).toEqual(["flexibility-accept:u-1:s-a", "flexibility-accept:u-1:s-b"])
      }))
  })

  describe("Communities", () => {
    it.effect("reads every page of communities and members; only active members with a user", () =>
      Effect.gen(function*() {
        const communities = yield* Communities
        expect((yield* communities.list).map((c) => c.id)).toEqual([community, second.id])
        const members = yield* communities.members(community)
        expect(members.map((m) => m.userId).sort()).toEqual(SimulatorWorld.community.participants.map((p) => p.sub).sort())
        expect(members.every((m) => m.communityId === community)).toBe(true)
        expect(yield* Effect.flip(communities.members("nowhere"))).toMatchObject({ status: 404 })
      }))
  })

  it.effect("the opportunity broadcast reaches the nudging service once for every member of two communities", () =>
    Effect.gen(function*() {
      const { state } = yield* NudgingServer
      const reactions = yield* PipelineReactions
      const run = {
        flow: "rec-forecasting-flow",
        namespace: "rec",
        status: "completed" as const,
        run_id: "clients-forecast",
        timestamp: new Date().toISOString()
      }
      const before = state.ingested.length
      yield* Effect.all([reactions.handle(run), reactions.handle(run)], { concurrency: 2 })
      yield* reactions.handle(run)
      yield* Effect.flatMap(Background, (b) => b.idle)
      const sent = state.ingested.slice(before).filter((e) => e.event_type === "flexibility_opportunity")
      expect(sent.map((e) => `${e.community_id}/${e.user_id}`).sort()).toEqual(
        Object.entries(registryData).flatMap(([c, members]) =>
          members.filter((m) => m.status === "active").map((m) => `${c}/${m.user_id}`)
        ).sort()
      )
      expect(sent.every((e) => e.facts["scenario"] === "flexibility_opportunity")).toBe(true)
    }))
})
