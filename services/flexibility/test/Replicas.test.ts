/**
 * Two instances of the service on one PostgreSQL database, as replicas run in production: the
 * one-shot pending view never gives one row to both, the opportunity broadcast of one run reaches
 * each member once, and a settlement run handled by both settles and nudges each commitment
 * once. (PGlite is one session, so these only mean something on PostgreSQL.)
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import { Database, Testing } from "@rec/db"
import { DevIdp } from "@rec/dev-idp"
import { DigitalTwinClient, SimulatorSynthetic, SimulatorWorld } from "@rec/digital-twin"
import { Engines } from "@rec/policy"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { Background } from "../src/Background.js"
import type { Commitment } from "../src/Domain.js"
import * as Http from "../src/Http.js"
import { migrations } from "../src/migrations/index.js"
import { Nudges } from "../src/Nudges.js"
import { PipelineReactions } from "../src/PipelineListener.js"
import {
  community,
  dayStart,
  fixedCommunities,
  giuliaMeter,
  hourMs,
  iso,
  RecordedNudges,
  recordingNudges,
  repoPolicies,
  simulator,
  token,
  verifierFor
} from "./support/Harness.js"
import { SharedDatabase, sharedDatabase } from "./support/SharedDatabase.js"

const skip = await Testing.postgresSkipReason()


const second = { id: "it-replica-community", members: 6 }
const members = {
  [community]: SimulatorWorld.community.participants.map((p) => p.sub),
  [second.id]: Array.from({ length: second.members }, (_, i) => SimulatorSynthetic.participantSub(second.id, i + 1, second.members))
}

const Shared = Layer.mergeAll(simulator({ syntheticCommunities: [second] }), recordingNudges, sharedDatabase("replicas", 5)).pipe(
  Layer.provideMerge(DevIdp.layerTest),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

interface Instance {
  readonly call: (method: "GET" | "POST", path: string, token: string, json?: unknown) => Effect.Effect<{ status: number; body: unknown }>
  readonly reactions: PipelineReactions
  readonly background: Background
}

/** A service instance with its own pool, server and background tasks, on the shared parts. */
const instance = Effect.gen(function*() {
  const idp = yield* DevIdp
  const config = yield* SharedDatabase
  const dt = yield* DigitalTwinClient
  const nudges = yield* Nudges
  const context = yield* Layer.build(
    Http.makeTest({
      verifier: verifierFor(idp.issuer),
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      database: Database.layerWith({ service: "flexibility", migrations, transformNames: false }, config),
      digitalTwin: Layer.succeed(DigitalTwinClient, dt),
      nudges: Layer.succeed(Nudges, nudges),
      communities: fixedCommunities(members),
      mqtt: false
    })
  )
  const client = Context.get(context, HttpClient.HttpClient)
  const call: Instance["call"] = (method, path, bearer, json) =>
    Effect.gen(function*() {
      let request = HttpClientRequest.bearerToken(HttpClientRequest.make(method)(path), bearer)
      if (json !== undefined) request = yield* HttpClientRequest.bodyJson(request, json)
      const response = yield* client.execute(request)
      return { status: response.status, body: yield* response.json }
    }).pipe(Effect.scoped, Effect.orDie)
  return { call, reactions: Context.get(context, PipelineReactions), background: Context.get(context, Background) } satisfies Instance
})

describe.skipIf(skip !== undefined)(`replicas on PostgreSQL${skip ? ` (skipped: ${skip})` : ""}`, () => {
  layer(Shared, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.scoped("two instances taking pending commitments never take the same one, and together take all", () =>
      Effect.gen(function*() {
        const [a, b] = yield* Effect.all([instance, instance], { concurrency: 2 })
        const admin = yield* token("svc-flexibility")
        const open: Array<string> = []
        for (let i = 0; i < 60; i++) {
          const reply = yield* (i % 2 === 0 ? a : b).call("POST", "/api/commitments", admin, {
            user_id: `pending-user-${i}`,
            suggestion_id: "s-pending",
            period_start: iso(Date.now() - hourMs),
            period_end: iso(Date.now() + hourMs)
          })
          expect(reply.status).toBe(201)
          open.push((reply.body as Commitment).id)
        }
        const drain = (who: Instance) =>
          Effect.gen(function*() {
            const taken: Array<string> = []
            while (true) {
              const reply = yield* who.call("GET", "/api/commitments/pending?limit=3", admin)
              expect(reply.status).toBe(200)
              const rows = reply.body as Array<Commitment>
              if (rows.length === 0) return taken
              taken.push(...rows.map((r) => r.id))
            }
          })
        const [fromA, fromB] = yield* Effect.all([drain(a), drain(b)], { concurrency: 2 })
        const all = [...fromA, ...fromB]
        expect(new Set(all).size).toBe(all.length)
        expect([...all].sort()).toEqual([...open].sort())
        // Both took part (3 at a time, 60 rows: a lone winner would be a scheduling fluke).
        expect(fromA.length).toBeGreaterThan(0)
        expect(fromB.length).toBeGreaterThan(0)
      }))

    it.scoped("one forecasting run handled by both instances nudges every member of both communities once", () =>
      Effect.gen(function*() {
        const [a, b] = yield* Effect.all([instance, instance], { concurrency: 2 })
        const event = {
          flow: "rec-forecasting-flow",
          namespace: "rec",
          status: "completed" as const,
          run_id: "replicas-forecast",
          timestamp: new Date().toISOString()
        }
        yield* Effect.all([a.reactions.handle(event), b.reactions.handle(event), a.reactions.handle(event)], { concurrency: 3 })
        const sent = (yield* RecordedNudges).sent.filter((e) => e.event_type === "flexibility_opportunity")
        expect(sent.map((e) => `${e.community_id}/${e.user_id}`).sort()).toEqual(
          Object.entries(members).flatMap(([c, users]) => users.map((u) => `${c}/${u}`)).sort()
        )
      }))

    it.scoped("one settlement run handled by both instances settles and nudges each commitment once", () =>
      Effect.gen(function*() {
        const [a, b] = yield* Effect.all([instance, instance], { concurrency: 2 })
        const admin = yield* token("svc-flexibility")
        const yesterday = dayStart(-1)
        const ids: Array<string> = []
        for (let i = 0; i < 20; i++) {
          const start = yesterday + (i % 20) * hourMs
          const reply = yield* a.call("POST", "/api/commitments", admin, {
            user_id: `settle-user-${i}`,
            suggestion_id: "s-replica-settle",
            community_id: community,
            device_id: giuliaMeter,
            period_start: iso(start),
            period_end: iso(start + hourMs)
          })
          ids.push((reply.body as Commitment).id)
        }
        const event = {
          flow: "rec-flexibility-flow",
          namespace: "rec",
          status: "completed" as const,
          run_id: "replicas-settle",
          timestamp: new Date().toISOString(),
          period: iso(yesterday).slice(0, 10)
        }
        yield* Effect.all([a.reactions.handle(event), b.reactions.handle(event)], { concurrency: 2 })
        yield* Effect.all([a.background.idle, b.background.idle])
        for (const id of ids) {
          const row = (yield* b.call("GET", `/api/commitments/${id}`, admin)).body as Commitment
          expect(row.status).toBe("settled")
        }
        const settled = (yield* RecordedNudges).sent.filter((e) => e.event_type === "commitment_settled")
        expect(settled.map((e) => e.facts["commitment_id"]).sort()).toEqual([...ids].sort())
      }))
  })
})
