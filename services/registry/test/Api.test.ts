/**
 * Every user route in both formats, with its filters, paging and the answers to bad input, on a
 * registry holding the example community and a generated second one.
 */
import { expect, layer } from "@effect/vitest"
import { Generate } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import { communityKey, get, importExample, serviceLayer, tokens } from "./helpers.js"

const other = "other-community"
const admin = Effect.flatMap(tokens, (mint) => mint("admin"))

const setup = Effect.gen(function*() {
  yield* importExample()
  yield* importExample(Generate.bundle({ community: other, members: 12, name: "Other" }))
})

interface Page {
  readonly items: ReadonlyArray<Record<string, unknown>>
  readonly next_cursor: string | null
}

const page = (url: string, token: string) =>
  Effect.map(get(url, { token }), (reply) => {
    expect(reply.status, `${url}: ${reply.text.slice(0, 300)}`).toBe(200)
    expect(reply.headers["content-type"]).toContain("application/json")
    return reply.body as Page
  })

const jsonld = (url: string, token: string) =>
  Effect.map(get(url, { token }), (reply) => {
    expect(reply.status, `${url}: ${reply.text.slice(0, 300)}`).toBe(200)
    expect(reply.headers["content-type"]).toBe("application/ld+json")
    return reply.body as Record<string, unknown>
  })

const hydraMember = "http://www.w3.org/ns/hydra/core#member"

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("user routes", (it) => {
  it.effect("imports the two communities", () => setup)

  it.effect("GET /user/communities lists both, in key order, as JSON and JSON-LD", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const listed = yield* page("/user/communities", token)
      expect(listed.items.map((c) => c["key"])).toEqual([communityKey, other])
      expect(listed.next_cursor).toBeNull()
      const community = listed.items[0]!
      expect(community).toMatchObject({
        key: communityKey,
        iri: "http://localhost:8004/communities/it-energy-community",
        name: "Comunità Energetica Alto Garda (simulated)",
        type: "https://schema.org/Organization",
        member_count: 7,
        owner: {
          reference: "https://cer-altogarda.example.org",
          iri: "https://cer-altogarda.example.org",
          name: "Comunità Energetica Rinnovabile Alto Garda",
          registered: true
        }
      })
      expect(Object.keys(community["areas"] as object)).toEqual(["arco", "nago-torbole", "riva-del-garda"])
      const ld = yield* jsonld("/user/communities?format=jsonld", token)
      expect(ld["@context"]).toBe("http://localhost:8004/context.jsonld")
      expect(ld["@type"]).toEqual(["http://www.w3.org/ns/hydra/core#Collection"])
      expect(ld["@id"]).toBe("http://localhost:8004/user/communities?format=jsonld")
      expect((ld[hydraMember] as Array<{ "@id": string }>).map((n) => n["@id"])).toEqual([
        "http://localhost:8004/communities/it-energy-community",
        "http://localhost:8004/communities/other-community"
      ])
    }))

  it.effect("GET /user/communities/{key}: one community; unknown is 404", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const one = yield* get(`/user/communities/${communityKey}`, { token })
      expect(one.status).toBe(200)
      expect(one.body).toMatchObject({ key: communityKey, member_count: 7 })
      const ld = yield* jsonld(`/user/communities/${communityKey}?format=jsonld`, token)
      expect(ld["@id"]).toBe("http://localhost:8004/communities/it-energy-community")
      expect(ld["@type"]).toEqual(["https://celine-eu.github.io/ontologies/celine#EnergyCommunity", "https://schema.org/Organization"])
      const missing = yield* get("/user/communities/nope", { token })
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ detail: "No community \"nope\" visible to this caller" })
    }))

  it.effect("GET /user/communities/{key}/members, by role, in both formats", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const all = yield* page(`/user/communities/${communityKey}/members`, token)
      expect(all.items).toHaveLength(7)
      const giulia = all.items.find((m) => m["key"] === "member-giulia-romano")!
      expect(giulia).toEqual({
        id: "it-energy-community.member-giulia-romano",
        key: "member-giulia-romano",
        iri: "http://localhost:8004/communities/it-energy-community/members/member-giulia-romano",
        community: communityKey,
        user_id: "52409e36-6d23-45ed-bb1e-d6c564a2f454",
        name: "Giulia Romano",
        type: "https://schema.org/Person",
        role: "prosumer",
        status: "active",
        area: "arco",
        delivery_points: [{ id: "IT001E81234501", type: "pod", address: "Via Segantini 12, 38062 Arco (TN)", active: true }],
        asset_count: 2,
        extra: { since: "2025-03-01" }
      })
      for (const [role, count] of [["prosumer", 3], ["consumer", 3], ["producer", 1]] as const) {
        const byRole = yield* page(`/user/communities/${communityKey}/members?role=${role}`, token)
        expect(byRole.items.map((m) => m["role"]), role).toEqual(Array(count).fill(role))
      }
      const ld = yield* jsonld(`/user/communities/${communityKey}/members?role=producer&format=jsonld`, token)
      const [node] = ld[hydraMember] as Array<Record<string, unknown>>
      expect(node?.["@type"]).toEqual(["https://celine-eu.github.io/ontologies/celine#Membership"])
      expect(node?.["https://celine-eu.github.io/ontologies/celine#role"]).toEqual({ "@id": "https://purl.org/peco/peco-core#Producer" })
      const missing = yield* get("/user/communities/nope/members", { token })
      expect(missing.status).toBe(404)
    }))

  it.effect("GET /user/members/{id} in both formats; unknown ids are 404", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const id = "it-energy-community.member-comune-arco"
      const member = yield* get(`/user/members/${id}`, { token })
      expect(member.body).toMatchObject({ id, role: "producer", type: "https://schema.org/GovernmentOrganization", asset_count: 2 })
      const ld = yield* jsonld(`/user/members/${id}?format=jsonld`, token)
      expect(ld["https://celine-eu.github.io/ontologies/celine#membershipParticipant"]).toMatchObject({
        "@id": "http://localhost:8004/communities/it-energy-community/participants/member-comune-arco",
        "@type": ["https://celine-eu.github.io/ontologies/celine#Participant", "https://schema.org/GovernmentOrganization"]
      })
      for (const bad of ["nope", "it-energy-community.nobody", "no-dot", "it-energy-community."]) {
        expect((yield* get(`/user/members/${bad}`, { token })).status, bad).toBe(404)
      }
    }))

  it.effect("GET /user/members/{id}/assets, by type", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const id = "it-energy-community.member-stefano-rinaldi"
      const assets = yield* page(`/user/members/${id}/assets`, token)
      expect(assets.items.map((a) => a["asset_type"]).sort()).toEqual(["meter", "pv", "storage"])
      const meter = (yield* page(`/user/members/${id}/assets?asset_type=meter`, token)).items
      expect(meter).toEqual([
        {
          id: "it-energy-community.member-stefano-rinaldi-meter",
          key: "member-stefano-rinaldi-meter",
          iri: "http://localhost:8004/communities/it-energy-community/assets/member-stefano-rinaldi-meter",
          community: communityKey,
          member: id,
          asset_type: "meter",
          name: "Contatore bidirezionale",
          site: null,
          owner: null,
          properties: { sensor_id: "member-stefano-rinaldi-meter", meter_type: "bidirectional", pod: "IT001E81234506", protocol: "mqtt" },
          device: null,
          relationships: {
            measures: ["it-energy-community.member-stefano-rinaldi-pv", "it-energy-community.member-stefano-rinaldi-battery"],
            paired_with: null
          }
        }
      ])
      const ld = yield* jsonld(`/user/members/${id}/assets?asset_type=storage&format=jsonld`, token)
      const [battery] = ld[hydraMember] as Array<Record<string, unknown>>
      expect(battery?.["https://celine-eu.github.io/ontologies/celine#pairedWith"]).toEqual({
        "@id": "http://localhost:8004/communities/it-energy-community/assets/member-stefano-rinaldi-pv"
      })
      expect((yield* get("/user/members/nope/assets", { token })).status).toBe(404)
    }))

  it.effect("GET /user/assets by community, member and type", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const all = yield* page("/user/assets?limit=500", token)
      // 15 in the example; 27 in the generated community (a meter each, PV, batteries, chargers, ...).
      expect(all.items).toHaveLength(15 + 27)
      const meters = yield* page(`/user/assets?community=${communityKey}&asset_type=meter`, token)
      expect(meters.items).toHaveLength(7)
      expect(meters.items.every((a) => a["community"] === communityKey && a["asset_type"] === "meter")).toBe(true)
      const mine = yield* page(`/user/assets?member=${communityKey}.member-comune-arco`, token)
      expect(mine.items.map((a) => a["key"])).toEqual(["member-comune-arco-meter", "member-comune-arco-pv"])
      expect(mine.items[1]?.["owner"]).toEqual({ reference: "https://www.comune.arco.tn.it", iri: "https://www.comune.arco.tn.it", name: null, registered: false })
      const none = yield* page("/user/assets?community=nope", token)
      expect(none).toEqual({ items: [], next_cursor: null })
      const ld = yield* jsonld(`/user/assets?member=${communityKey}.member-comune-arco&format=jsonld`, token)
      const pv = (ld[hydraMember] as Array<Record<string, unknown>>)[1]
      expect(pv?.["https://celine-eu.github.io/ontologies/celine#ownedBy"]).toEqual({
        "@id": "https://www.comune.arco.tn.it",
        "@type": ["http://xmlns.com/foaf/0.1/Agent"]
      })
    }))

  it.effect("GET /user/sites by community and member", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const sites = yield* page(`/user/sites?community=${communityKey}`, token)
      expect(sites.items.map((s) => s["key"])).toEqual(["member-comune-arco-school", "member-giulia-romano-home", "member-luca-greco-home"])
      const one = yield* page(`/user/sites?member=${communityKey}.member-giulia-romano`, token)
      expect(one.items).toEqual([
        {
          id: "it-energy-community.member-giulia-romano-home",
          key: "member-giulia-romano-home",
          iri: "http://localhost:8004/communities/it-energy-community/sites/member-giulia-romano-home",
          community: communityKey,
          member: "it-energy-community.member-giulia-romano",
          name: "Casa Romano",
          area: "arco",
          address: "Via Segantini 12, 38062 Arco (TN)",
          location: { lat: 45.9191, lon: 10.8849 },
          delivery_point: "IT001E81234501",
          extra: {}
        }
      ])
      expect((yield* page(`/user/sites?community=${other}`, token)).items).toHaveLength(12)
      const ld = yield* jsonld(`/user/sites?member=${communityKey}.member-giulia-romano&format=jsonld`, token)
      expect((ld[hydraMember] as Array<Record<string, unknown>>)[0]?.["@type"]).toEqual(["https://celine-eu.github.io/ontologies/celine#Site"])
    }))

  it.effect("pages follow a stable cursor; the last full page has no next cursor", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const seen: Array<unknown> = []
      let url: string | null = `/user/communities/${other}/members?limit=5`
      let pages = 0
      while (url !== null) {
        const current: Page = yield* page(url, token)
        seen.push(...current.items.map((m) => m["key"]))
        pages++
        url = current.next_cursor === null ? null : `/user/communities/${other}/members?limit=5&cursor=${encodeURIComponent(current.next_cursor)}`
      }
      expect(pages).toBe(3)
      expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(5, "0")}`))
      const exact = yield* page(`/user/communities/${other}/members?limit=12`, token)
      expect(exact.items).toHaveLength(12)
      expect(exact.next_cursor).toBeNull()
      // The same cursor gives the same page.
      const first = yield* page(`/user/communities/${other}/members?limit=5`, token)
      const again = yield* page(`/user/communities/${other}/members?limit=5&cursor=${first.next_cursor}`, token)
      const twice = yield* page(`/user/communities/${other}/members?limit=5&cursor=${first.next_cursor}`, token)
      expect(again).toEqual(twice)
      // JSON-LD names the next page.
      const ld = yield* jsonld(`/user/communities/${other}/members?limit=5&format=jsonld`, token)
      expect(ld["http://www.w3.org/ns/hydra/core#view"]).toEqual({
        "@id": `http://localhost:8004/user/communities/${other}/members?limit=5&format=jsonld`,
        "@type": ["http://www.w3.org/ns/hydra/core#PartialCollectionView"],
        "http://www.w3.org/ns/hydra/core#next": {
          "@id": `http://localhost:8004/user/communities/${other}/members?limit=5&format=jsonld&cursor=${first.next_cursor}`
        }
      })
    }))

  it.effect("bad format, role, asset type, limit or cursor is a 400 naming the parameter", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["/user/communities?format=xml", "format"],
        [`/user/communities/${communityKey}?format=JSONLD`, "format"],
        [`/user/communities/${communityKey}/members?role=operator`, "role"],
        [`/user/members/${communityKey}.member-luca-greco?format=rdf`, "format"],
        [`/user/members/${communityKey}.member-luca-greco/assets?asset_type=battery`, "asset_type"],
        ["/user/assets?asset_type=solar", "asset_type"],
        ["/user/sites?format=yaml", "format"],
        ["/user/communities?limit=0", "limit"],
        ["/user/communities?limit=501", "limit"],
        ["/user/communities?limit=ten", "limit"],
        ["/user/communities?cursor=garbage", "cursor"],
        ["/user/assets?cursor=v1.%2F%2F", "cursor"]
      ]
      for (const [url, parameter] of cases) {
        const reply = yield* get(url, { token })
        expect(reply.status, url).toBe(400)
        const body = reply.body as { detail: string; issues: Array<{ path: Array<string> }> }
        expect(body.issues.map((issue) => issue.path[0]), url).toContain(parameter)
      }
    }))

  it.effect("the limit caps pages at 500", () =>
    Effect.gen(function*() {
      const token = yield* admin
      const capped = yield* page("/user/assets?limit=500", token)
      expect(capped.items.length).toBeLessThanOrEqual(500)
      expect((yield* page("/user/assets?limit=3", token)).items).toHaveLength(3)
    }))
})
