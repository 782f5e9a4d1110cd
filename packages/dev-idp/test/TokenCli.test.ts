import { expect, layer } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Effect, Layer } from "effect"
import { DevIdp } from "../src/DevIdp.js"
import { decodePayload, fetchToken, grantRequest, listIdentities } from "../src/TokenCli.js"
import { verifyRemote } from "./helpers.js"

layer(Layer.merge(DevIdp.layerTest, FetchHttpClient.layer), { excludeTestServices: true })("dev-token", (it) => {
  it.effect("gets user tokens through the default or a named client, and service tokens", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const request = { baseUrl: idp.issuer, identities: idp.identities }
      const admin = yield* fetchToken({ ...request, name: "admin" })
      expect(yield* verifyRemote(idp, admin.access_token)).toMatchObject({ preferred_username: "admin", azp: "rec-cli" })
      const frontend = yield* fetchToken({ ...request, name: "participant", client: "rec-frontend", scope: "openid dt.read" })
      expect(decodePayload(frontend.id_token!)).toMatchObject({ preferred_username: "participant", aud: "rec-frontend" })
      const service = yield* fetchToken({ ...request, name: "svc-flexibility", scope: "dt.read" })
      expect(yield* verifyRemote(idp, service.access_token)).toMatchObject({ client_id: "svc-flexibility", scope: "dt.read" })
    }))

  it.effect("explains refusals and unreachable providers", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const request = { baseUrl: idp.issuer, identities: idp.identities }
      expect((yield* Effect.flip(fetchToken({ ...request, name: "nobody" }))).message).toContain("--list")
      expect((yield* Effect.flip(fetchToken({ ...request, name: "svc-grid", scope: "dt.write" }))).message).toContain(
        "invalid_scope"
      )
      expect((yield* Effect.flip(fetchToken({ ...request, name: "svc-grid", client: "rec-cli" }))).message).toContain(
        "users only"
      )
      const down = yield* Effect.flip(fetchToken({ ...request, baseUrl: "http://127.0.0.1:9", name: "admin" }))
      expect(down.message).toContain("no identity provider answers at http://127.0.0.1:9")
    }))

  it.effect("sends public clients' id in the form and confidential ones' credentials as Basic", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const publicGrant = yield* grantRequest({ identities: idp.identities, name: "viewer", client: "rec-frontend" })
      expect(publicGrant).toEqual({
        form: { grant_type: "password", username: "viewer", password: "viewer", client_id: "rec-frontend" }
      })
      const serviceGrant = yield* grantRequest({ identities: idp.identities, name: "svc-grid" })
      expect(serviceGrant.basic).toEqual(["svc-grid", "dev-only-secret-svc-grid"])
      const table = listIdentities(idp.identities)
      expect(table.split("\n")[0]).toMatch(/^name\s+kind/)
      expect(table).toMatch(/dso-operator\s+user\s+org:dso-alto-garda/)
      expect(table).toMatch(/svc-no-scopes\s+service\s+-/)
      expect(table).not.toContain("dev-only-secret")
    }))
})
