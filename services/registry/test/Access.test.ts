/**
 * Who sees what (issue 13 point 5, `policies/registry/access.rego`): tokens of the dev identity
 * provider against the real policies. Members see the communities they belong to (by the token's
 * `sub`), another community's data is a 404 or absent; admins and services with `registry.read`
 * see everything; admin routes need the group `admins` or a service with `registry.admin`;
 * `/health` is open; a policy that cannot decide refuses.
 */
import { expect, layer } from "@effect/vitest"
import { Generate } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { communityKey, exampleText, get, importExample, post, serviceLayer, tokens } from "./helpers.js"

const other = "other-community"
const mint = (name: string, options?: Parameters<Effect.Effect.Success<typeof tokens>>[1]) =>
  Effect.flatMap(tokens, (m) => m(name, options))

const keysOf = (body: unknown) => (body as { items: Array<{ key: string }> }).items.map((i) => i.key)

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("access", (it) => {
  it.effect("imports the example community and another one", () =>
    Effect.gen(function*() {
      yield* importExample()
      yield* importExample(Generate.bundle({ community: other, members: 3 }))
    }))

  it.effect("no token: 401 on every user and admin route; /health and the context are open", () =>
    Effect.gen(function*() {
      for (const url of ["/user/communities", `/user/communities/${communityKey}`, "/user/assets", "/user/sites", "/admin/export?community=x"]) {
        const reply = yield* get(url)
        expect(reply.status, url).toBe(401)
        expect(reply.body, url).toEqual({ detail: "Missing bearer token" })
        expect(reply.headers["www-authenticate"]).toBe("Bearer")
      }
      expect((yield* post("/admin/import", { bundle: exampleText })).status).toBe(401)
      expect((yield* get("/health")).body).toMatchObject({ status: "ok" })
      expect((yield* get("/context.jsonld")).status).toBe(200)
    }))

  it.effect("an invalid, expired or ID token is a 401", () =>
    Effect.gen(function*() {
      const expired = yield* mint("participant", { expired: true })
      const id = yield* mint("participant", { kind: "id" })
      for (const token of ["not-a-jwt", expired, id]) {
        expect((yield* get("/user/communities", { token })).status).toBe(401)
      }
    }))

  it.effect("a participant sees its community, its members, assets and sites, and nothing of another", () =>
    Effect.gen(function*() {
      const token = yield* mint("participant", { client: "rec-frontend" })
      expect(keysOf((yield* get("/user/communities", { token })).body)).toEqual([communityKey])
      expect((yield* get(`/user/communities/${communityKey}`, { token })).status).toBe(200)
      expect((yield* get(`/user/communities/${communityKey}/members`, { token })).body).toMatchObject({ items: { length: 7 } })
      expect((yield* get(`/user/members/${communityKey}.member-luca-greco`, { token })).status).toBe(200)
      // The other community is not there at all: 404s and empty lists, never a 403 that tells it exists.
      expect((yield* get(`/user/communities/${other}`, { token })).status).toBe(404)
      expect((yield* get(`/user/communities/${other}/members`, { token })).status).toBe(404)
      expect((yield* get(`/user/members/${other}.m00000`, { token })).status).toBe(404)
      expect((yield* get(`/user/members/${other}.m00000/assets`, { token })).status).toBe(404)
      expect((yield* get(`/user/assets?community=${other}`, { token })).body).toEqual({ items: [], next_cursor: null })
      expect((yield* get(`/user/sites?community=${other}`, { token })).body).toEqual({ items: [], next_cursor: null })
      const assets = (yield* get("/user/assets?limit=500", { token })).body as { items: Array<{ community: string }> }
      expect(new Set(assets.items.map((a) => a.community))).toEqual(new Set([communityKey]))
      const formats = yield* get(`/user/communities/${other}?format=jsonld`, { token })
      expect(formats.status).toBe(404)
    }))

  it.effect("a user in no community sees none; a 'viewer' or 'manager' is no admin", () =>
    Effect.gen(function*() {
      for (const name of ["viewer", "manager", "nogroup", "dso-operator"]) {
        const token = yield* mint(name)
        expect((yield* get("/user/communities", { token })).body, name).toEqual({ items: [], next_cursor: null })
        expect((yield* get(`/user/communities/${communityKey}`, { token })).status, name).toBe(404)
        expect((yield* get(`/admin/export?community=${communityKey}`, { token })).status, name).toBe(403)
      }
    }))

  it.effect("admins (group admins) see every community and administer, from any client", () =>
    Effect.gen(function*() {
      const frontend = yield* mint("admin", { client: "rec-frontend" })
      expect(keysOf((yield* get("/user/communities", { token: frontend })).body)).toEqual([communityKey, other])
      expect((yield* get(`/admin/export?community=${other}`, { token: frontend })).status).toBe(200)
    }))

  it.effect("the flexibility service (registry.read) lists every community and its members, and administers nothing", () =>
    Effect.gen(function*() {
      const token = yield* mint("svc-flexibility")
      expect(keysOf((yield* get("/user/communities", { token })).body)).toEqual([communityKey, other])
      expect((yield* get(`/user/communities/${other}/members`, { token })).body).toMatchObject({ items: { length: 3 } })
      const refused = yield* get(`/admin/export?community=${other}`, { token })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ detail: "Not allowed: service needs the registry.admin scope" })
      expect((yield* post("/admin/import", { token, bundle: exampleText })).status).toBe(403)
    }))

  it.effect("services without a registry scope are refused (403), not shown an empty registry", () =>
    Effect.gen(function*() {
      for (const name of ["svc-rec-registry", "svc-no-scopes", "svc-grid"]) {
        const reply = yield* get("/user/communities", { token: yield* mint(name) })
        expect(reply.status, name).toBe(403)
        expect(reply.body, name).toEqual({ detail: "Not allowed: service needs the registry.read scope" })
      }
    }))

  it.effect("a service with registry.admin exports, validates and imports", () =>
    Effect.gen(function*() {
      const token = yield* mint("svc-pipelines", { scopes: ["registry.admin"] })
      expect((yield* get(`/admin/export?community=${communityKey}`, { token })).status).toBe(200)
      expect((yield* get("/admin/import", { token, bundle: exampleText })).body).toMatchObject({ valid: true })
      expect((yield* post("/admin/import", { token, bundle: exampleText })).status).toBe(201)
    }))

  it.effect("users other than admins cannot export, validate or import, whatever their client's scopes", () =>
    Effect.gen(function*() {
      const token = yield* mint("participant")
      const reply = yield* post("/admin/import", { token, bundle: exampleText })
      expect(reply.status).toBe(403)
      expect(reply.body).toEqual({ detail: "Not allowed: only admins may export, validate or import bundles" })
      expect((yield* get("/admin/import", { token, bundle: exampleText })).status).toBe(403)
    }))
})

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("membership by sub and status", (it) => {
  it.effect("an inactive member no longer sees the community; suspended and pending ones still do", () =>
    Effect.gen(function*() {
      const suspended = exampleText
        .replace(/(user_id: 52409e36[^\n]*\n(?:.*\n){4}\s+status: )active/, "$1inactive")
        .replace(/(user_id: cc28f729[^\n]*\n(?:.*\n){4}\s+status: )active/, "$1suspended")
      expect(suspended).not.toBe(exampleText)
      yield* importExample(suspended)
      const participant = yield* mint("participant")
      expect((yield* get("/user/communities", { token: participant })).body).toEqual({ items: [], next_cursor: null })
      const consumer = yield* mint("participant-consumer")
      expect(keysOf((yield* get("/user/communities", { token: consumer })).body)).toEqual([communityKey])
    }))
})

const emptyPolicies = fs.mkdtempSync(path.join(os.tmpdir(), "registry-no-policies-"))

layer(serviceLayer({ policies: emptyPolicies }), { excludeTestServices: true, timeout: "120 seconds" })("fail closed", (it) => {
  it.effect("without policies nothing is allowed (503, not 200 or 403), and readiness says so", () =>
    Effect.gen(function*() {
      const admin = yield* mint("admin")
      for (const url of ["/user/communities", `/admin/export?community=${communityKey}`]) {
        const reply = yield* get(url, { token: admin })
        expect(reply.status, url).toBe(503)
        expect((reply.body as { detail: string }).detail, url).toContain("Access policies are unavailable, so nothing is allowed")
      }
      expect((yield* post("/admin/import", { token: admin, bundle: exampleText })).status).toBe(503)
      const ready = yield* get("/ready")
      expect(ready.status).toBe(503)
      expect(ready.body).toEqual({ status: "not_ready", checks: { db: "ok", policies: "failed", mqtt: "disabled" } })
    }))
})
