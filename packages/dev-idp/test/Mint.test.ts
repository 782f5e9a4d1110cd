import { describe, expect, it, layer } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Exit, Layer } from "effect"
import * as Jose from "jose"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DevIdp } from "../src/DevIdp.js"
import { loadIdentities } from "../src/Identities.js"
import { verifyRemote } from "./helpers.js"

layer(DevIdp.layerTest, { excludeTestServices: true })("programmatic mint API", (it) => {
  it.effect("mints a user token identical in shape to the password grant's", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const claims = yield* verifyRemote(idp, yield* idp.mint("manager"))
      expect(claims).toMatchObject({
        preferred_username: "manager",
        groups: ["/managers"],
        azp: "rec-cli",
        iss: idp.issuer
      })
      expect(String(claims.scope)).toContain("dataset.admin")
    }))

  it.effect("mints through another client and with replaced scopes", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const viaFrontend = yield* verifyRemote(idp, yield* idp.mint("viewer", { client: "rec-frontend" }))
      expect(viaFrontend).toMatchObject({ azp: "rec-frontend", scope: "profile email dt.read dataset.query userdata.read userdata.write" })
      const noScopes = yield* verifyRemote(idp, yield* idp.mint("viewer", { scopes: [] }))
      expect(noScopes.scope).toBe("profile email")
      const service = yield* verifyRemote(idp, yield* idp.mint("svc-grid", { scopes: ["grid.read"] }))
      expect(service).toMatchObject({ client_id: "svc-grid", scope: "grid.read" })
    }))

  it.effect("mints expired tokens that verification rejects", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.mint("admin", { expired: true })
      const result = yield* Effect.either(verifyRemote(idp, token))
      expect(Either.isLeft(result) && String(result.left.error)).toContain("exp")
      const payload = Jose.decodeJwt(token)
      expect(payload.exp! * 1000).toBeLessThan(Date.now())
    }))

  it.effect("mints other audiences, extra claims and removed claims", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.mint("participant", {
        audience: "svc-grid",
        claims: { locale: "it", email: undefined },
        expiresIn: "5 minutes"
      })
      expect(Exit.isFailure(yield* Effect.exit(verifyRemote(idp, token)))).toBe(true)
      const claims = yield* verifyRemote(idp, token, "svc-grid")
      expect(claims.locale).toBe("it")
      expect(claims).not.toHaveProperty("email")
      expect(claims.exp! - claims.iat!).toBe(300)
    }))

  it.effect("access tokens carry the platform's audience; ID tokens (typ ID) the client's, as Keycloak's", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      expect(idp.audience).toBe("rec-platform")
      for (const name of ["viewer", "svc-grid"]) {
        const access = yield* verifyRemote(idp, yield* idp.mint(name), idp.audience)
        expect(access.typ).toBe("Bearer")
      }
      const id = yield* verifyRemote(idp, yield* idp.mint("viewer", { kind: "id" }), "rec-cli")
      expect(id).toMatchObject({ typ: "ID", azp: "rec-cli", preferred_username: "viewer" })
      expect(id).not.toHaveProperty("scope")
      expect(Exit.isFailure(yield* Effect.exit(verifyRemote(idp, yield* idp.mint("viewer", { kind: "id" }), idp.audience))))
        .toBe(true)
      // Keycloak's audience mapper can add the platform's audience to ID tokens too.
      const both = yield* idp.mint("viewer", { kind: "id", client: "rec-frontend", audience: ["rec-frontend", "rec-platform"] })
      expect(yield* verifyRemote(idp, both, idp.audience)).toMatchObject({ typ: "ID", azp: "rec-frontend" })
      expect((yield* Effect.flip(idp.mint("svc-grid", { kind: "id" }))).message).toContain("ID tokens are issued to users")
    }))

  it.effect("signs arbitrary claims and verifies its own tokens", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.sign({ sub: undefined, custom: true })
      const claims = yield* idp.verify(token)
      expect(claims).toMatchObject({ iss: idp.issuer, custom: true })
      expect(claims).not.toHaveProperty("sub")
      const tampered = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA")
      expect((yield* Effect.flip(idp.verify(tampered)))._tag).toBe("InvalidToken")
    }))

  it.effect("fails with MintError for unknown names and clients without a service account", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      expect((yield* Effect.flip(idp.mint("nobody")))._tag).toBe("MintError")
      expect((yield* Effect.flip(idp.mint("rec-frontend"))).message).toContain("no service account")
      expect((yield* Effect.flip(idp.mint("viewer", { client: "nope" }))).message).toContain("unknown client")
    }))
})

describe("signing key file", () => {
  it.live("keeps the key across restarts, so earlier tokens still verify", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dev-idp-key-"))
      const keyFile = path.join(dir, "nested", "key.json")
      const options = { port: 0, host: "127.0.0.1", keyFile }
      const first = yield* Effect.scoped(
        Effect.gen(function*() {
          const idp = yield* DevIdp
          return { token: yield* idp.mint("admin"), jwks: yield* Effect.promise(() => fetch(idp.jwksUri).then((r) => r.json())) }
        }).pipe(Effect.provide(Layer.fresh(DevIdp.layer(options))))
      )
      expect((fs.statSync(keyFile).mode & 0o777).toString(8)).toBe("600")
      const secondJwks = yield* Effect.scoped(
        Effect.gen(function*() {
          const idp = yield* DevIdp
          return yield* Effect.promise(() => fetch(idp.jwksUri).then((r) => r.json()))
        }).pipe(Effect.provide(Layer.fresh(DevIdp.layer(options))))
      )
      expect(secondJwks).toEqual(first.jwks)
      const { payload } = yield* Effect.promise(() =>
        Jose.jwtVerify(first.token, Jose.createLocalJWKSet(secondJwks as Jose.JSONWebKeySet), { algorithms: ["RS256"] })
      )
      expect(payload.preferred_username).toBe("admin")
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.live("fails to start with a clear error when the port is taken", () =>
    Effect.gen(function*() {
      const identities = yield* loadIdentities().pipe(Effect.provide(NodeFileSystem.layer))
      const exit = yield* Effect.scoped(
        Effect.gen(function*() {
          const first = yield* DevIdp
          return yield* Effect.exit(
            Effect.scoped(Layer.build(DevIdp.layer({ port: first.port, host: "127.0.0.1", identities })))
          )
        }).pipe(Effect.provide(Layer.fresh(DevIdp.layer({ port: 0, host: "127.0.0.1", identities }))))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("cannot listen")
    }))
})
