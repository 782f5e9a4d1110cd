/**
 * Errors without `_tag` in their bodies (`HttpErrors`, a service's own `Contract.UntaggedError`s)
 * keep their own statuses in one API although they share one body shape, encode as their fields
 * only, and are documented that way.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, it, layer } from "@effect/vitest"
import { Contract, HttpErrors, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { get } from "./fixtures/http.js"

/** Own classes as a service defines them, same shape, other statuses. */
const notOk = {
  ok: Schema.Literal(false).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => false as const)),
  reason: Schema.String
}
class Denied extends Contract.UntaggedError<Denied>()("Denied", notOk, { status: 403, description: "The caller may not" }) {}
class Busy extends Contract.UntaggedError<Busy>()("Busy", notOk, { status: 503, description: "Try again later" }) {}

// The 401 comes first in the error union, which is where a 400 used to be encoded as a 401.
class Group extends HttpApiGroup.make("g")
  .add(HttpApiEndpoint.get("bad", "/bad").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("unauthorized", "/unauthorized").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("unavailable", "/unavailable").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("busy", "/busy").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("denied", "/denied").addSuccess(Schema.String))
  .addError(HttpErrors.Unauthorized)
  .addError(HttpErrors.BadRequest)
  .addError(HttpErrors.ServiceUnavailable)
  .addError(Busy)
  .addError(Denied)
{}
class Api extends HttpApi.make("detail").add(Group) {}

const GroupLive = HttpApiBuilder.group(Api, "g", (handlers) =>
  handlers
    .handle("bad", () => Effect.fail(new HttpErrors.BadRequest({ detail: "bad input" })))
    .handle("unauthorized", () => Effect.fail(new HttpErrors.Unauthorized({ detail: "who are you" })))
    .handle("unavailable", () => Effect.fail(new HttpErrors.ServiceUnavailable({ detail: "later" })))
    .handle("busy", () => Effect.fail(new Busy({ reason: "queue full" })))
    .handle("denied", () => Effect.fail(new Denied({ reason: "no" }))))

const service = { name: "detail", version: "0.0.0" }

describe("errors without _tag in their bodies", () => {
  layer(ServiceKit.serveTest(Api, { service, port: 0 }).pipe(Layer.provide(GroupLive)), {
    excludeTestServices: true
  })("in one API", (it) => {
    it.effect("each keeps its status and its body is exactly its fields", () =>
      Effect.gen(function*() {
        expect(yield* get("/bad")).toMatchObject({ status: 400, json: { detail: "bad input" } })
        expect(yield* get("/unauthorized")).toMatchObject({ status: 401, json: { detail: "who are you" } })
        expect(yield* get("/unavailable")).toMatchObject({ status: 503, json: { detail: "later" } })
        expect(yield* get("/busy")).toMatchObject({ status: 503, json: { ok: false, reason: "queue full" } })
        expect(yield* get("/denied")).toMatchObject({ status: 403, json: { ok: false, reason: "no" } })
        expect(Object.keys((yield* get("/bad")).json as object)).toEqual(["detail"])
      }))

    it.effect("typed clients decode them into their classes", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(Api)
        const bad = yield* Effect.flip(client.g.bad())
        expect(bad).toBeInstanceOf(HttpErrors.BadRequest)
        expect(bad).toMatchObject({ _tag: "BadRequest", detail: "bad input" })
        const denied = yield* Effect.flip(client.g.denied())
        expect(denied).toBeInstanceOf(Denied)
        expect(denied).toMatchObject({ _tag: "Denied", ok: false, reason: "no" })
      }))
  })

  /** A service's own 400 with more fields, in a contract whose API-level 400 is the kit's. */
  class Rejected extends Contract.UntaggedError<Rejected>()("Rejected", {
    ...HttpErrors.fields,
    outcomes: Schema.Array(Schema.String)
  }, { status: 400, description: "Rejected, with outcomes" }) {}
  class Ingest extends HttpApiGroup.make("i")
    .add(HttpApiEndpoint.post("ingest", "/ingest").setPayload(Schema.Struct({ n: Schema.Number })).addSuccess(Schema.String))
    .addError(Rejected)
  {}
  class IngestApi extends Contract.make("ingest").add(Ingest) {}
  const IngestLive = HttpApiBuilder.group(IngestApi, "i", (handlers) =>
    handlers.handle("ingest", ({ payload }) =>
      payload.n > 0
        ? Effect.succeed("ok")
        : payload.n === 0
        ? Effect.fail(new Rejected({ detail: "no rule", outcomes: ["r1: rejected"] }))
        : Effect.fail(new HttpErrors.BadRequest({ detail: "negative" }))))

  layer(ServiceKit.serveTest(IngestApi, { service, port: 0 }).pipe(Layer.provide(IngestLive)), {
    excludeTestServices: true
  })("a domain error sharing the kit's status", (it) => {
    it.effect("typed clients decode it as the domain class, and the kit's own 400 as BadRequest", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(IngestApi)
        const rejected = yield* Effect.flip(client.i.ingest({ payload: { n: 0 } }))
        expect(rejected).toBeInstanceOf(Rejected)
        expect(rejected).toMatchObject({ detail: "no rule", outcomes: ["r1: rejected"] })
        const invalid = yield* Effect.flip(client.i.ingest({ payload: { n: -1 } }))
        expect(invalid).toBeInstanceOf(HttpErrors.BadRequest)
        expect(invalid).toMatchObject({ detail: "negative" })
      }))
  })

  it("kit classes decode bodies with exactly their fields", () => {
    expect(Schema.decodeUnknownSync(HttpErrors.BadRequest)({ detail: "x" })).toBeInstanceOf(HttpErrors.BadRequest)
    expect(() => Schema.decodeUnknownSync(HttpErrors.BadRequest)({ detail: "x", outcomes: [] })).toThrow(/outcomes/)
  })

  it.effect("the OpenAPI document shows the bodies without _tag, per status", () =>
    Effect.gen(function*() {
      const spec = OpenApi.fromApi(Api)
      const result = yield* Effect.promise(() => new Validator().validate(spec as never))
      expect(result.errors).toBeUndefined()
      const responses = spec.paths["/bad"].get!.responses
      const body = (status: number) => JSON.stringify(responses[status])
      expect(body(401)).toContain("\"detail\"")
      expect(body(401)).toContain("\"issues\"")
      expect(body(401)).not.toContain("_tag")
      expect(body(403)).toContain("The caller may not")
      expect(body(403)).not.toContain("_tag")
    }))

  it("instances carry their tag and their fields; the constructor fills the constant ones", () => {
    const denied = new Denied({ reason: "x" })
    expect(denied).toMatchObject({ _tag: "Denied", ok: false, reason: "x" })
    expect(Schema.encodeSync(Denied)(denied)).toEqual({ ok: false, reason: "x" })
    expect(Schema.decodeUnknownSync(Denied)({ ok: false, reason: "y" })).toBeInstanceOf(Denied)
  })
})
