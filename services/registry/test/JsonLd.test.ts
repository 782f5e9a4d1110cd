/**
 * JSON-LD answers through a real JSON-LD processor (`jsonld`), offline: the document loader
 * serves the registry's context document from memory and refuses every other URL. Every answer
 * expands; every property, `@id` and `@type` is an absolute IRI and no CURIE (`prefix:x`) is
 * left; every node has an `@id` and an `@type`; the context document compacts the answers into
 * short terms; the well-known URL redirects to the context document.
 */
import { expect, layer } from "@effect/vitest"
import { Iris, JsonLd } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import jsonld from "jsonld"
import { bundle } from "./fixtures.js"
import { communityKey, get, importExample, serviceLayer, tokens } from "./helpers.js"

const contextUrl = "http://localhost:8004/context.jsonld"
const loaded: Array<string> = []

/** Offline: only the registry's context document, from memory. */
const documentLoader = async (url: string) => {
  loaded.push(url)
  if (url === contextUrl) return { contextUrl: undefined, documentUrl: url, document: JsonLd.contextDocument as never }
  throw new Error(`the test document loader refuses ${url}`)
}

/** A community whose CURIEs use its own prefixes (a `#` namespace among them) and well-known ones. */
const curies = bundle({
  head: "version: \"1\"\nschema_version: \"0.4\"\ncontext: { prefixes: { ex: https://ex.example.org/vocab#, org: https://org.example.org/ } }",
  community: "community:\n  id: curies\n  name: CURIEs\n  type: ex:Cooperative\n  owner: alto-garda-rec\n  areas: { north: { name: North } }",
  members: "members:\n  m1: { user_id: u-1, name: Ann, role: consumer, area: north, status: active, type: org:Household }\n  m2: { user_id: u-2, name: Bob, role: prosumer, area: north, status: active, type: peco:Prosumer }"
})

const prefixNames = new Set([...Object.keys(Iris.Namespaces), "ex", "org"])
const iriPattern = /^([a-z][a-z0-9+.-]*):/i

/** Problems with one IRI: not absolute, or a CURIE of a known prefix. */
const iriProblem = (value: unknown): string | undefined => {
  if (typeof value !== "string") return `not a string: ${JSON.stringify(value)}`
  const scheme = iriPattern.exec(value)?.[1]
  if (scheme === undefined || !URL.canParse(value)) return `not an absolute IRI: ${value}`
  if (prefixNames.has(scheme) && !value.slice(scheme.length + 1).startsWith("//")) return `a CURIE: ${value}`
  return undefined
}

/** Every property name, `@id` and `@type` of an expanded document. */
const expandedProblems = (node: unknown, path = "$"): Array<string> => {
  if (Array.isArray(node)) return node.flatMap((item, i) => expandedProblems(item, `${path}[${i}]`))
  if (typeof node !== "object" || node === null) return []
  const record = node as Record<string, unknown>
  const problems: Array<string> = []
  for (const [key, value] of Object.entries(record)) {
    if (key === "@value" || key === "@language" || key === "@index") continue
    if (key === "@type") {
      // A JSON literal's type is the keyword @json; node types are IRIs.
      if (value === "@json") continue
      for (const type of Array.isArray(value) ? value : [value]) {
        const problem = iriProblem(type)
        if (problem !== undefined) problems.push(`${path}.@type ${problem}`)
      }
      continue
    }
    if (key === "@id") {
      const problem = iriProblem(value)
      if (problem !== undefined) problems.push(`${path}.@id ${problem}`)
      continue
    }
    if (!key.startsWith("@")) {
      const problem = iriProblem(key)
      if (problem !== undefined) problems.push(`${path} key ${problem}`)
    }
    if (record["@type"] !== "@json") problems.push(...expandedProblems(value, `${path}.${key}`))
  }
  return problems
}

/** Nodes of the answer as written that lack an `@id` or an `@type` (value objects excepted). */
const nodesWithoutIdentity = (node: unknown, path = "$"): Array<string> => {
  if (Array.isArray(node)) return node.flatMap((item, i) => nodesWithoutIdentity(item, `${path}[${i}]`))
  if (typeof node !== "object" || node === null) return []
  const record = node as Record<string, unknown>
  if ("@value" in record) return []
  const keys = Object.keys(record)
  // A reference `{"@id": ...}` points at a node described elsewhere.
  if (keys.length === 1 && keys[0] === "@id") return []
  const missing = ["@id", "@type"].filter((k) => !(k in record)).map((k) => `${path} has no ${k}`)
  return [...missing, ...Object.entries(record).flatMap(([key, value]) => nodesWithoutIdentity(value, `${path}.${key}`))]
}

const routes = [
  "/user/communities",
  `/user/communities/${communityKey}`,
  `/user/communities/${communityKey}/members`,
  `/user/members/${communityKey}.member-stefano-rinaldi`,
  `/user/members/${communityKey}.member-stefano-rinaldi/assets`,
  `/user/assets?community=${communityKey}`,
  `/user/sites?community=${communityKey}`,
  "/user/communities/curies",
  "/user/communities/curies/members",
  "/user/assets?limit=2"
]

const admin = Effect.flatMap(tokens, (mint) => mint("admin"))

const answer = (route: string) =>
  Effect.gen(function*() {
    const reply = yield* get(`${route}${route.includes("?") ? "&" : "?"}format=jsonld`, { token: yield* admin })
    expect(reply.status, route).toBe(200)
    expect(reply.headers["content-type"]).toBe("application/ld+json")
    return reply.body as Record<string, unknown>
  })

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("JSON-LD", (it) => {
  it.effect("imports the example and a community written with CURIEs", () =>
    Effect.gen(function*() {
      yield* importExample()
      yield* importExample(curies)
    }))

  it.effect("every answer expands with expanded IRIs only, and every node has @id and @type", () =>
    Effect.gen(function*() {
      for (const route of routes) {
        const document = yield* answer(route)
        expect(document["@context"], route).toBe(contextUrl)
        expect(nodesWithoutIdentity(document), route).toEqual([])
        loaded.length = 0
        const expanded = yield* Effect.promise(() => jsonld.expand(document as never, { documentLoader }))
        expect(loaded, route).toEqual([contextUrl])
        expect(expanded.length, route).toBe(1)
        expect(expandedProblems(expanded), route).toEqual([])
        // Nothing in the text looks like one of the prefixes' CURIEs either.
        const text = JSON.stringify(document)
        for (const prefix of prefixNames) expect(text, `${route} ${prefix}`).not.toMatch(new RegExp(`"${prefix}:[^/]`))
      }
    }))

  it.effect("CURIEs from bundles are expanded against their prefixes, # namespaces kept", () =>
    Effect.gen(function*() {
      const community = yield* answer("/user/communities/curies")
      expect(community["@type"]).toEqual(["https://celine-eu.github.io/ontologies/celine#EnergyCommunity", "https://ex.example.org/vocab#Cooperative"])
      const members = yield* answer("/user/communities/curies/members")
      const participants = (members["http://www.w3.org/ns/hydra/core#member"] as Array<Record<string, Record<string, unknown>>>)
        .map((m) => m["https://celine-eu.github.io/ontologies/celine#membershipParticipant"]?.["@type"])
      expect(participants).toEqual([
        ["https://celine-eu.github.io/ontologies/celine#Participant", "https://org.example.org/Household"],
        ["https://celine-eu.github.io/ontologies/celine#Participant", "https://purl.org/peco/peco-core#Prosumer"]
      ])
    }))

  it.effect("owners of the owner registry are foaf:Agent nodes from @rec/owners", () =>
    Effect.gen(function*() {
      const community = yield* answer("/user/communities/curies")
      expect(community["https://celine-eu.github.io/ontologies/celine#ownedBy"]).toEqual({
        "@id": "https://cer-altogarda.example.org",
        "@type": ["http://xmlns.com/foaf/0.1/Agent", "http://xmlns.com/foaf/0.1/Organization", "https://schema.org/Organization"],
        "http://xmlns.com/foaf/0.1/name": "Comunità Energetica Rinnovabile Alto Garda",
        "http://xmlns.com/foaf/0.1/homepage": { "@id": "https://cer-altogarda.example.org" }
      })
    }))

  it.effect("the context document compacts answers into short terms, and they turn into RDF", () =>
    Effect.gen(function*() {
      const document = yield* answer(`/user/members/${communityKey}.member-giulia-romano`)
      const compacted = (yield* Effect.promise(() =>
        jsonld.compact(document as never, JsonLd.contextDocument["@context"] as never, { documentLoader })
      )) as Record<string, unknown>
      expect(compacted).toMatchObject({
        "@id": "http://localhost:8004/communities/it-energy-community/members/member-giulia-romano",
        "@type": "Membership",
        identifier: "member-giulia-romano",
        role: "peco:Prosumer",
        status: "active",
        isMemberOf: "http://localhost:8004/communities/it-energy-community",
        membershipParticipant: { "@type": ["Participant", "schema:Person"], name: "Giulia Romano", userId: "52409e36-6d23-45ed-bb1e-d6c564a2f454" }
      })
      const quads = (yield* Effect.promise(() => jsonld.toRDF(document as never, { documentLoader, format: "application/n-quads" }))) as unknown as string
      expect(quads).toContain("<http://localhost:8004/communities/it-energy-community/members/member-giulia-romano> <https://celine-eu.github.io/ontologies/celine#role> <https://purl.org/peco/peco-core#Prosumer> .")
    }))

  it.effect("GET /context.jsonld serves the context; /.well-known/jsonld-context redirects to it", () =>
    Effect.gen(function*() {
      const context = yield* get("/context.jsonld")
      expect(context.status).toBe(200)
      expect(context.headers["content-type"]).toContain("application/ld+json")
      expect(context.body).toEqual(JsonLd.contextDocument)
      const redirect = yield* get("/.well-known/jsonld-context", { headers: {} })
      expect(redirect.status).toBe(302)
      expect(redirect.headers["location"]).toBe(contextUrl)
    }))
})

layer(
  serviceLayer({ env: { ONTOLOGY_CONTEXT_URL: "https://ontology.example.org/celine.jsonld", BASE_URL: "https://registry.example.org/rec/" } }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("configured context and base", (it) => {
  it.effect("answers reference ONTOLOGY_CONTEXT_URL, mint IRIs below BASE_URL, and the well-known URL redirects there", () =>
    Effect.gen(function*() {
      yield* importExample()
      const community = yield* answer(`/user/communities/${communityKey}`)
      expect(community["@context"]).toBe("https://ontology.example.org/celine.jsonld")
      expect(community["@id"]).toBe("https://registry.example.org/rec/communities/it-energy-community")
      const list = yield* answer("/user/communities")
      expect(list["@id"]).toBe("https://registry.example.org/rec/user/communities?format=jsonld")
      const redirect = yield* get("/.well-known/jsonld-context")
      expect(redirect.status).toBe(302)
      expect(redirect.headers["location"]).toBe("https://ontology.example.org/celine.jsonld")
    }))
})
