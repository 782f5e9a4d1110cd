/**
 * A database outage is a 503 with `Retry-After`, not a 500: the kit tells a lost connection from
 * a bug by the error's code and message (and its causes).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import { HttpErrors, ServiceKit, Unavailability } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { get } from "./fixtures/http.js"

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code })

class Group extends HttpApiGroup.make("g")
  .add(HttpApiEndpoint.get("refused", "/refused").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("shutdown", "/shutdown").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("duplicate", "/duplicate").addSuccess(Schema.String))
  .add(HttpApiEndpoint.get("own", "/own").addSuccess(Schema.String).addError(HttpErrors.ServiceUnavailable))
{}
class Api extends HttpApi.make("db").add(Group) {}

const Live = HttpApiBuilder.group(Api, "g", (handlers) =>
  handlers
    .handle("refused", () => Effect.die(new SqlError({ cause: pgError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432") })))
    .handle("shutdown", () =>
      Effect.orDie(Effect.fail(new SqlError({ cause: pgError("57P01", "terminating connection due to administrator command") }))))
    .handle("duplicate", () =>
      Effect.die(new SqlError({ cause: pgError("23505", "duplicate key value violates unique constraint") })))
    .handle("own", () => Effect.fail(new HttpErrors.ServiceUnavailable({ detail: "The registry database is unavailable; try again shortly" }))))

describe("database outages", () => {
  it("tells an outage from a bug", () => {
    expect(Unavailability.isDatabaseUnavailable(new SqlError({ cause: pgError("08006", "connection failure") }))).toBe(true)
    expect(Unavailability.isDatabaseUnavailable(new SqlError({ cause: new Error("Connection terminated unexpectedly") }))).toBe(true)
    expect(Unavailability.isDatabaseUnavailable({ _tag: "DatabaseUnavailable" })).toBe(true)
    expect(Unavailability.isDatabaseUnavailable(new SqlError({ cause: pgError("23505", "duplicate key") }))).toBe(false)
    expect(Unavailability.isDatabaseUnavailable(new SqlError({ cause: pgError("42601", "syntax error") }))).toBe(false)
    expect(Unavailability.isDatabaseUnavailable(new Error("boom"))).toBe(false)
  })

  layer(ServiceKit.serveTest(Api, { service: { name: "db", version: "1" }, port: 0 }).pipe(Layer.provide(Live)), {
    excludeTestServices: true
  })("served", (it) => {
    it.effect("503 with Retry-After for a lost database, 500 for a failing statement", () =>
      Effect.gen(function*() {
        for (const path of ["/refused", "/shutdown"]) {
          const answer = yield* get(path)
          expect(answer.status, path).toBe(503)
          expect(answer.headers["retry-after"]).toBe("5")
          expect(answer.json).toEqual({ detail: "The database is unavailable; try again in a few seconds" })
        }
        expect((yield* get("/duplicate")).status).toBe(500)
      }))

    it.effect("a service's own 503 gets Retry-After too, keeping its body", () =>
      Effect.gen(function*() {
        const answer = yield* get("/own")
        expect(answer.status).toBe(503)
        expect(answer.headers["retry-after"]).toBe("5")
        expect(answer.json).toEqual({ detail: "The registry database is unavailable; try again shortly" })
      }))
  })
})
