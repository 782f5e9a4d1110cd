/**
 * The service does what its OpenAPI document says (ContractCheck of the service kit): every
 * status it answers is documented with its body, secured operations answer 401 without a token,
 * open ones never ask for one, and no probe (empty body, invalid JSON, a nesting bomb) gets a 5xx.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { Migrations } from "@rec/db"
import { migrations } from "@rec/nudging-service"
import { ContractCheck } from "@rec/platform"
import * as Effect from "effect/Effect"
import { call, serviceLayer, token } from "./support/Service.js"

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("contract", (it) => {
  for (const identity of ["svc-nudging", "svc-grid", "participant"]) {
    it.effect(`answers only what /openapi.json documents (probing as ${identity})`, () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const t = yield* token(identity)
        const result = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token: t }))
        expect(result.findings).toEqual([])
        expect(result.requests).toBeGreaterThan(40)
      }))
  }

  it.effect("/docs, /redoc and /openapi.json are served; the document names every endpoint", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/openapi.json")).body as { info: { title: string }; paths: Record<string, unknown> }
      expect(spec.info.title).toBe("REC notification (nudging) service")
      expect(Object.keys(spec.paths).sort()).toEqual([
        "/admin/ingest-event",
        "/admin/scheduled-events",
        "/ingest-event",
        "/ingest-events/batch",
        "/notifications",
        "/notifications/{id}",
        "/notifications/{id}/read",
        "/preferences",
        "/preferences/kinds",
        "/scheduled-events",
        "/scheduled-events/batch",
        "/scheduled-events/{external_key}",
        "/track/click",
        "/webpush/send-test",
        "/webpush/subscribe",
        "/webpush/unsubscribe",
        "/webpush/vapid-public-key"
      ])
      expect((yield* call("GET", "/docs")).status).toBe(200)
      expect((yield* call("GET", "/redoc")).status).toBe(200)
      expect((yield* call("GET", "/ready")).body).toMatchObject({ status: "ready", checks: { database: "ok" } })
    }))

  it("the migrations are well-formed", () => {
    const result = Migrations.validate(migrations)
    expect(result.problems).toEqual([])
    expect(result.migrations.map((m) => m.id)).toEqual([1, 2])
  })
})
