/**
 * Validate, import and export against one database backend (PGlite or PostgreSQL): the same
 * suite runs on both (`Import.test.ts`, `ImportPostgres.test.ts`).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { expect, type Vitest } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Generate } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import type { DevIdp } from "@rec/dev-idp"
import { communityKey, exampleText, get, importExample, post, tokens } from "../helpers.js"

/** What the suite's tests need: the service's client, the identity provider and the database. */
type It = Vitest.MethodsNonLive<HttpClient.HttpClient | DevIdp | SqlClient, true>

const admin = Effect.flatMap(tokens, (mint) => mint("admin"))

export const exportOf = (key: string) =>
  Effect.gen(function*() {
    const reply = yield* get(`/admin/export?community=${key}`, { token: yield* admin })
    expect(reply.status, reply.text.slice(0, 300)).toBe(200)
    expect(reply.headers["content-type"]).toContain("application/yaml")
    return reply.text
  })

const counts = (key: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [row] = yield* sql<Record<string, unknown>>`SELECT
      (SELECT count(*) FROM community WHERE key = ${key}) AS community,
      (SELECT count(*) FROM participant WHERE community_key = ${key}) AS participants,
      (SELECT count(*) FROM membership WHERE community_key = ${key}) AS memberships,
      (SELECT count(*) FROM site WHERE community_key = ${key}) AS sites,
      (SELECT count(*) FROM asset WHERE community_key = ${key}) AS assets,
      (SELECT count(*) FROM meter WHERE community_key = ${key}) AS meters`
    return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)]))
  }).pipe(Effect.orDie)

export const importSuite = (it: It) => {
  it.effect("validates without writing: every problem, what an import would replace", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const fresh = yield* get("/admin/import", { token, bundle: exampleText })
      expect(fresh.status).toBe(200)
      expect(fresh.body).toEqual({
        valid: true,
        community: communityKey,
        counts: { members: 7, participants: 7, memberships: 7, sites: 3, assets: 15, meters: 7 },
        existing: null,
        problems: [],
        warnings: []
      })
      expect((yield* counts(communityKey)).community).toBe(0)
      const invalid = yield* get("/admin/import", { token, bundle: exampleText.replace("role: producer", "role: owner").replace("area: arco\n", "area: trento\n") })
      expect(invalid.status).toBe(200)
      expect(invalid.body).toMatchObject({ valid: false, community: communityKey, counts: null, existing: null })
      expect((invalid.body as { problems: Array<{ path: Array<string>; code: string }> }).problems.map((p) => [p.path.join("/"), p.code])).toEqual([
        ["members/member-comune-arco/role", "schema"],
        ["members/member-giulia-romano/area", "dangling-reference"]
      ])
      const broken = yield* get("/admin/import", { token, bundle: "community: [unclosed\n" })
      expect(broken.status).toBe(200)
      expect(broken.body).toMatchObject({ valid: false, community: null, problems: [{ code: "yaml", line: 2 }] })
    }))

  it.effect("imports (201 with counts), then replaces the community whole", () =>
    Effect.gen(function*() {
      const first = yield* importExample()
      expect(first.status).toBe(201)
      expect(first.body).toEqual({
        community: communityKey,
        imported: { members: 7, participants: 7, memberships: 7, sites: 3, assets: 15, meters: 7 },
        replaced: null,
        warnings: [],
        notified: false
      })
      expect(yield* counts(communityKey)).toEqual({ community: 1, participants: 7, memberships: 7, sites: 3, assets: 15, meters: 7 })
      const token = yield* admin
      expect((yield* get("/admin/import", { token, bundle: exampleText })).body).toMatchObject({
        existing: { members: 7, sites: 3, assets: 15, meters: 7 }
      })
      // Without Chiara (and her heat pump and meter), with Luca's meter changed.
      const smaller = exampleText
        .replace(/ {2}member-chiara-esposito:\n(?: {4}.*\n)+/, "")
        .replace("sensor_id: member-luca-greco-meter", "sensor_id: luca-new-meter")
      const second = yield* importExample(smaller)
      expect(second.body).toMatchObject({
        imported: { members: 6, assets: 13, meters: 6 },
        replaced: { members: 7, participants: 7, memberships: 7, sites: 3, assets: 15, meters: 7 }
      })
      expect((yield* get(`/user/members/${communityKey}.member-chiara-esposito`, { token })).status).toBe(404)
      const meter = yield* get(`/user/assets?member=${communityKey}.member-luca-greco&asset_type=meter`, { token })
      expect((meter.body as { items: Array<{ properties: { sensor_id: string } }> }).items[0]?.properties.sensor_id).toBe("luca-new-meter")
      expect(yield* counts(communityKey)).toEqual({ community: 1, participants: 6, memberships: 6, sites: 3, assets: 13, meters: 6 })
    }))

  it.effect("import -> export -> import -> export gives the same bytes, and the export re-imports to the same state", () =>
    Effect.gen(function*() {
      yield* importExample()
      const first = yield* exportOf(communityKey)
      yield* importExample(first)
      const second = yield* exportOf(communityKey)
      expect(second).toBe(first)
      // The export holds what the example holds: same records through the API.
      const token = yield* admin
      const members = yield* get(`/user/communities/${communityKey}/members`, { token })
      expect((members.body as { items: Array<{ extra: unknown }> }).items.find((m) => (m as { key?: string }).key === "member-giulia-romano"))
        .toMatchObject({ extra: { since: "2025-03-01" }, delivery_points: [{ id: "IT001E81234501", address: "Via Segantini 12, 38062 Arco (TN)" }] })
      expect(first).toContain("schema_version: \"0.4\"")
      expect(first).toContain("type: schema:Person")
      expect(first).toContain("relationships:\n            paired_with: member-stefano-rinaldi-pv")
      const generated = Generate.bundle({ community: "generated", members: 40 })
      yield* importExample(generated)
      const g1 = yield* exportOf("generated")
      yield* importExample(g1)
      expect(yield* exportOf("generated")).toBe(g1)
    }))

  it.effect("a bundle with problems is refused whole (422, every problem) and nothing changes", () =>
    Effect.gen(function*() {
      yield* importExample()
      const before = yield* exportOf(communityKey)
      const token = yield* admin
      const reply = yield* post("/admin/import", {
        token,
        bundle: exampleText.replace("role: producer", "role: owner").replace("pod: IT001E81234506", "pod: IT999")
      })
      expect(reply.status).toBe(422)
      const body = reply.body as { detail: string; issues: Array<{ path: Array<string>; message: string }>; problems: Array<{ code: string }> }
      expect(body.detail).toBe("The bundle has 2 problems; nothing was imported")
      expect(body.issues.map((i) => i.path.join("/"))).toEqual([
        "members/member-comune-arco/role",
        "members/member-stefano-rinaldi/assets/meter/member-stefano-rinaldi-meter/pod"
      ])
      expect(body.problems.map((p) => p.code)).toEqual(["schema", "dangling-reference"])
      expect(yield* exportOf(communityKey)).toBe(before)
      const yamlError = yield* post("/admin/import", { token, bundle: "community: {\n" })
      expect(yamlError.status).toBe(422)
      expect(yield* exportOf(communityKey)).toBe(before)
    }))

  it.effect("a failure inside the transaction leaves the previous community exactly as it was", () =>
    Effect.gen(function*() {
      yield* importExample()
      const before = yield* exportOf(communityKey)
      const beforeCounts = yield* counts(communityKey)
      const sql = yield* SqlClient
      // The database refuses one asset; the validation cannot know.
      yield* sql.unsafe(`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.name = 'boom' THEN RAISE EXCEPTION 'asset boom refused by a test trigger' USING ERRCODE = 'check_violation'; END IF;
          RETURN NEW;
        END $$`)
      yield* sql.unsafe("CREATE TRIGGER refuse_boom BEFORE INSERT ON asset FOR EACH ROW EXECUTE FUNCTION refuse_boom()")
      const token = yield* admin
      const reply = yield* post("/admin/import", { token, bundle: exampleText.replace("name: Batteria domestica", "name: boom").replace(/user_id: 8d60f007[^\n]*/, "user_id: changed") })
      yield* sql.unsafe("DROP TRIGGER refuse_boom ON asset")
      yield* sql.unsafe("DROP FUNCTION refuse_boom()")
      expect(reply.status).toBe(409)
      expect((reply.body as { detail: string }).detail).toMatch(/^The database refused the import \(23514: asset boom refused by a test trigger\); nothing was changed$/)
      expect(yield* counts(communityKey)).toEqual(beforeCounts)
      expect(yield* exportOf(communityKey)).toBe(before)
      // A new community that fails leaves nothing behind either.
      yield* sql.unsafe(`CREATE FUNCTION refuse_all() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'no meters today'; END $$`)
      yield* sql.unsafe("CREATE TRIGGER refuse_all BEFORE INSERT ON meter FOR EACH ROW EXECUTE FUNCTION refuse_all()")
      const fresh = yield* post("/admin/import", { token, bundle: Generate.bundle({ community: "never-stored", members: 3 }) })
      yield* sql.unsafe("DROP TRIGGER refuse_all ON meter")
      yield* sql.unsafe("DROP FUNCTION refuse_all()")
      expect(fresh.status).toBe(409)
      expect(yield* counts("never-stored")).toEqual({ community: 0, participants: 0, memberships: 0, sites: 0, assets: 0, meters: 0 })
    }).pipe(Effect.orDie))

  it.effect("two imports of one community at once: both succeed, one after the other, never mixed", () =>
    Effect.gen(function*() {
      const a = Generate.bundle({ community: "concurrent", members: 30, name: "A" })
      const b = Generate.bundle({ community: "concurrent", members: 20, name: "B" })
      const token = yield* admin
      const replies = yield* Effect.all([post("/admin/import", { token, bundle: a }), post("/admin/import", { token, bundle: b })], {
        concurrency: 2
      })
      expect(replies.map((r) => r.status)).toEqual([201, 201])
      const state = yield* counts("concurrent")
      expect([30, 20]).toContain(state["memberships"])
      expect(state["participants"]).toBe(state["memberships"])
      const names = (yield* get("/user/communities/concurrent/members?limit=500", { token })).body as { items: Array<{ name: string }> }
      const prefixes = new Set(names.items.map((m) => m.name.split(" ")[0]))
      expect(prefixes.size).toBe(1)
      expect(names.items).toHaveLength(prefixes.has("A") ? 30 : 20)
    }))

  it.effect("export of an unknown community is a 404; the community parameter is required", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const missing = yield* get("/admin/export?community=nope", { token })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ detail: "No community \"nope\" in the registry" })
      const noParam = yield* get("/admin/export", { token })
      expect(noParam.status).toBe(400)
      expect((noParam.body as { issues: Array<{ path: Array<string> }> }).issues[0]?.path).toEqual(["community"])
    }))
}
