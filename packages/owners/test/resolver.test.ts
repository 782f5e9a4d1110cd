import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option } from "effect"
import * as path from "node:path"
import { FOAF, Foaf, ownerIri, SCHEMA_ORG, schemaOrgIri, toAgentNode } from "../src/JsonLd.js"
import { decodeRegistry } from "../src/Loader.js"
import { OWNER_TYPES } from "../src/OwnerSchema.js"
import { DEFAULT_PLATFORM_BASE_URL } from "../src/Config.js"
import { Owners } from "../src/Owners.js"

const text = `owners:
  - id: northgrid-dso
    type: schema:Corporation
    name: NorthGrid Distribution
    did: did:web:northgrid.example.org
    url: https://northgrid.example.org/
    aliases: [dso, grid-operator]
  - id: springfield
    type: schema:GovernmentOrganization
    name: City of Springfield
    url: https://springfield.example.org/council
  - id: solar-coop
    type: schema:NGO
    name: Solar Coop
`

const registry = Either.getOrThrow(decodeRegistry([{ file: "owners.yaml", text }]))
const id = (reference: string) => Option.map(registry.lookup(reference), (owner) => owner.id)

describe("lookup", () => {
  it("finds an owner by id and by each alias (governance ownership names)", () => {
    expect(id("northgrid-dso")).toEqual(Option.some("northgrid-dso"))
    expect(id("dso")).toEqual(Option.some("northgrid-dso"))
    expect(id("grid-operator")).toEqual(Option.some("northgrid-dso"))
  })

  it("finds an owner by DID", () => {
    expect(id("did:web:northgrid.example.org")).toEqual(Option.some("northgrid-dso"))
  })

  it("finds an owner by URL, regardless of a trailing slash or scheme and host case", () => {
    expect(id("https://springfield.example.org/council")).toEqual(Option.some("springfield"))
    expect(id("https://springfield.example.org/council/")).toEqual(Option.some("springfield"))
    expect(id("HTTPS://Springfield.EXAMPLE.org/council")).toEqual(Option.some("springfield"))
    expect(id("https://northgrid.example.org")).toEqual(Option.some("northgrid-dso"))
  })

  it("finds nothing for unknown references, other paths or differently cased ids", () => {
    expect(id("unknown")).toEqual(Option.none())
    expect(id("DSO")).toEqual(Option.none())
    expect(id("https://springfield.example.org")).toEqual(Option.none())
    expect(id("did:web:springfield.example.org")).toEqual(Option.none())
  })

  it("get matches ids only, not aliases", () => {
    expect(Option.isSome(registry.get("northgrid-dso"))).toBe(true)
    expect(Option.isNone(registry.get("dso"))).toBe(true)
  })
})

describe("JSON-LD foaf:Agent nodes", () => {
  const baseUrl = "https://rec.example.org/registry"
  const agent = (reference: string) => toAgentNode(Option.getOrThrow(registry.lookup(reference)), { baseUrl })

  it("use the DID as @id when set, even with a URL", () => {
    expect(agent("dso")["@id"]).toBe("did:web:northgrid.example.org")
  })

  it("use the URL as @id without a DID", () => {
    expect(agent("springfield")["@id"]).toBe("https://springfield.example.org/council")
  })

  it("mint an IRI under the platform base URL without either, keeping its path", () => {
    expect(agent("solar-coop")["@id"]).toBe("https://rec.example.org/registry/owners/solar-coop")
    const coop = Option.getOrThrow(registry.get("solar-coop"))
    expect(ownerIri(coop, "https://rec.example.org/registry/")).toBe("https://rec.example.org/registry/owners/solar-coop")
    expect(ownerIri(coop, "http://localhost:8004")).toBe("http://localhost:8004/owners/solar-coop")
  })

  it("render the whole node with expanded IRIs", () => {
    expect(agent("northgrid-dso")).toEqual({
      "@id": "did:web:northgrid.example.org",
      "@type": [
        "http://xmlns.com/foaf/0.1/Agent",
        "http://xmlns.com/foaf/0.1/Organization",
        "https://schema.org/Corporation"
      ],
      "http://xmlns.com/foaf/0.1/name": "NorthGrid Distribution",
      "http://xmlns.com/foaf/0.1/homepage": { "@id": "https://northgrid.example.org/" }
    })
  })

  it("leave out foaf:homepage without a URL", () => {
    const node = agent("solar-coop")
    expect(node).not.toHaveProperty(Foaf.homepage)
    expect(node["@type"]).toEqual([Foaf.Agent, Foaf.Organization, `${SCHEMA_ORG}NGO`])
    expect(node[`${FOAF}name` as typeof Foaf.name]).toBe("Solar Coop")
  })

  it("expand every owner type to its schema.org IRI", () => {
    expect(OWNER_TYPES.map(schemaOrgIri)).toEqual([
      "https://schema.org/Corporation",
      "https://schema.org/GovernmentOrganization",
      "https://schema.org/ResearchOrganization",
      "https://schema.org/EducationalOrganization",
      "https://schema.org/NGO",
      "https://schema.org/Organization",
      "https://schema.org/Project"
    ])
  })
})

describe("Owners service", () => {
  it.effect("resolves references and renders agents over an in-memory registry", () =>
    Effect.gen(function*() {
      const owners = yield* Owners
      expect(owners.all().map((owner) => owner.id)).toEqual(["northgrid-dso", "springfield", "solar-coop"])
      expect((yield* owners.resolve("dso")).id).toBe("northgrid-dso")
      const missing = yield* Effect.flip(owners.resolve("nobody"))
      expect(missing._tag).toBe("OwnerNotFound")
      expect(missing.message).toBe("no owner with id, alias, DID or URL \"nobody\"")
      expect(Option.map(owners.agentFor("solar-coop"), (node) => node["@id"])).toEqual(
        Option.some("https://rec.example.org/owners/solar-coop")
      )
      expect(Option.isNone(owners.agentFor("nobody"))).toBe(true)
    }).pipe(Effect.provide(Owners.fromRegistry(registry, { baseUrl: "https://rec.example.org" }))))

  const withConfig = (entries: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))

  it.scoped("loads OWNERS_FILE with its local overlay and uses PLATFORM_BASE_URL", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "owners-service-" })
      const file = path.join(dir, "owners.yaml")
      yield* fs.writeFileString(file, text)
      yield* fs.writeFileString(
        path.join(dir, "owners.local.yaml"),
        "owners:\n  - { id: local-only, type: schema:Project, name: Local Project }\n"
      )
      const owners = yield* Effect.provide(
        Owners,
        Owners.Default.pipe(
          Layer.provide(withConfig({ OWNERS_FILE: file, PLATFORM_BASE_URL: "https://platform.example.org/base" }))
        )
      )
      expect(owners.registry.size).toBe(4)
      expect(owners.iri(Option.getOrThrow(owners.lookup("local-only")))).toBe(
        "https://platform.example.org/base/owners/local-only"
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("fails with every problem when the configured file is invalid or missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(Owners, Owners.Default.pipe(Layer.provide(withConfig({ OWNERS_FILE: "/nonexistent/owners.yaml" }))))
      )
      expect(error._tag).toBe("OwnersInvalid")
      expect(error.message).toContain("/nonexistent/owners.yaml: file not found")
    }))

  it.effect("rejects a PLATFORM_BASE_URL that is not an http(s) URL", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(Owners, Owners.Default.pipe(Layer.provide(withConfig({ PLATFORM_BASE_URL: "not a url" }))))
      )
      expect(String(error)).toContain("PLATFORM_BASE_URL must be an absolute http(s) URL")
    }))

  it.scoped("starts empty, with the default base URL, when OWNERS_FILE is unset and ./owners.yaml is absent", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "owners-cwd-" })
      const previous = process.cwd()
      yield* Effect.acquireRelease(Effect.sync(() => process.chdir(dir)), () => Effect.sync(() => process.chdir(previous)))
      const owners = yield* Effect.provide(Owners, Owners.Default.pipe(Layer.provide(withConfig({}))))
      expect(owners.registry.size).toBe(0)
      expect(owners.baseUrl).toBe(DEFAULT_PLATFORM_BASE_URL)
      expect(DEFAULT_PLATFORM_BASE_URL).toBe("http://localhost:8004")
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
