/** Expanding what bundles write into IRIs (the original stored `peco:Prosumer` as written). */
import { Iris } from "@rec/registry-service"
import * as fc from "effect/FastCheck"
import { describe, expect, it } from "vitest"

describe("Iris.expand", () => {
  it("expands declared and well-known prefixes by concatenation, keeping # namespaces", () => {
    expect(Iris.expand("peco:Prosumer")).toEqual({ _tag: "Iri", iri: "https://purl.org/peco/peco-core#Prosumer" })
    expect(Iris.expand("schema:Person")).toEqual({ _tag: "Iri", iri: "https://schema.org/Person" })
    expect(Iris.expand("ex:a/b", { ex: "https://ex.example.org/ns#" })).toEqual({ _tag: "Iri", iri: "https://ex.example.org/ns#a/b" })
    // A bundle may redefine a well-known prefix.
    expect(Iris.expand("schema:Person", { schema: "http://schema.org/" })).toEqual({ _tag: "Iri", iri: "http://schema.org/Person" })
  })

  it("keeps IRIs, refuses unknown prefixes and relative values without a base", () => {
    for (const iri of ["https://schema.org/Person", "urn:isbn:0451450523", "did:web:example.org", "mailto:a@example.org", "tag:example.org,2025:x"]) {
      expect(Iris.expand(iri), iri).toEqual({ _tag: "Iri", iri })
    }
    expect(Iris.expand("zz:Thing")).toEqual({ _tag: "UnknownPrefix", prefix: "zz" })
    expect(Iris.expand("Person")._tag).toBe("NotAnIri")
    expect(Iris.expand("Person", {}, "https://rec.example.org/types/")).toEqual({ _tag: "Iri", iri: "https://rec.example.org/types/Person" })
    // A suffix starting with // is an IRI (JSON-LD), even when the prefix is declared.
    expect(Iris.expand("ex://host/x", { ex: "https://ex.example.org/" })).toEqual({ _tag: "Iri", iri: "ex://host/x" })
    // Schemes are not prefixes unless a bundle declares them as such.
    expect(Iris.expand("https:Person", { https: "https://override.example.org/" })).toEqual({ _tag: "Iri", iri: "https://override.example.org/Person" })
  })

  it("any declared prefix expands to namespace + local part", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/).filter((p) => !Iris.iriSchemes.has(p)),
        fc.stringMatching(/^[A-Za-z0-9_.~-]{1,20}$/),
        (prefix, local) => {
          const namespace = `https://ns.example.org/${prefix}#`
          expect(Iris.expand(`${prefix}:${local}`, { [prefix]: namespace })).toEqual({ _tag: "Iri", iri: namespace + local })
        }
      )
    )
  })
})

describe("ids", () => {
  it("are <community>.<key> and parse back", () => {
    expect(Iris.entityId("c1", "m.1")).toBe("c1.m.1")
    expect(Iris.parseEntityId("c1.m.1")).toEqual({ community: "c1", key: "m.1" })
    for (const bad of ["", "nodot", ".x", "x."]) expect(Iris.parseEntityId(bad), bad).toBeUndefined()
  })

  it("minted IRIs keep a base path and escape keys", () => {
    const mint = Iris.mint("https://registry.example.org/rec")
    expect(mint.member("c1", "m1")).toBe("https://registry.example.org/rec/communities/c1/members/m1")
    expect(mint.deliveryPoint("c1", "IT/01#x")).toBe("https://registry.example.org/rec/communities/c1/delivery-points/IT%2F01%23x")
  })
})
