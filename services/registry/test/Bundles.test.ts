/**
 * Validation of bundles beyond the schema (`BundleCheck`): references, keys unique across the
 * bundle, CURIE prefixes, owners, values PostgreSQL cannot store, YAML syntax; every problem of a
 * bundle in one answer; and the parsing limits (depth, aliases, expansion, cycles, encoding),
 * which refuse a request quickly whatever the document.
 */
import { Bundles, Config, type Domain } from "@rec/registry-service"
import { describe, expect, it } from "vitest"
import { bundle, withAssets } from "./fixtures.js"
import { exampleText } from "./helpers.js"

const checker = Bundles.make({
  limits: Config.defaultLimits,
  knownOwner: (reference) => ["acme", "acme-alias", "https://acme.example.org"].includes(reference)
})

const check = (yaml: string | Uint8Array) => {
  const result = typeof yaml === "string" ? checker.checkText(yaml) : checker.checkBytes(yaml)
  if (result._tag === "Left") throw new Error(`refused: ${result.left.detail}`)
  return result.right
}

const problems = (yaml: string) => check(yaml).problems.map((p) => `${p.path.join("/")} ${p.code}`)

const refusal = (yaml: string | Uint8Array) => {
  const result = typeof yaml === "string" ? checker.checkText(yaml) : checker.checkBytes(yaml)
  if (result._tag === "Right") throw new Error(`not refused: ${JSON.stringify(result.right.problems).slice(0, 300)}`)
  return result.left
}

describe("the example bundle", () => {
  it("is valid and plans 7 members, their assets, meters and sites", () => {
    const checked = check(exampleText)
    expect(checked.problems).toEqual([])
    expect(checked.warnings).toEqual([])
    expect(checked.community).toBe("it-energy-community")
    expect(checked.plan?.memberships.map((m) => m.key).sort()).toEqual([
      "member-chiara-esposito",
      "member-comune-arco",
      "member-francesca-marino",
      "member-giulia-romano",
      "member-luca-greco",
      "member-panificio-bruni",
      "member-stefano-rinaldi"
    ])
    expect(checked.plan?.meters).toHaveLength(7)
    expect(checked.plan?.assets).toHaveLength(15)
    expect(checked.plan?.sites).toHaveLength(3)
  })

  it("expands its CURIEs when planning (schema:Person -> https://schema.org/Person)", () => {
    const plan = check(exampleText).plan!
    expect(plan.community.type).toBe("schema:Organization")
    expect(plan.community.type_iri).toBe("https://schema.org/Organization")
    expect(new Set(plan.participants.map((p) => p.type_iri))).toEqual(
      new Set(["https://schema.org/Person", "https://schema.org/GovernmentOrganization", "https://schema.org/LocalBusiness"])
    )
    // Fields the registry does not interpret are kept.
    expect(plan.memberships.find((m) => m.key === "member-giulia-romano")?.extra).toEqual({ since: "2025-03-01" })
  })
})

describe("references", () => {
  it("a member's area must be an area of the community", () => {
    expect(problems(bundle({ members: "members:\n  m1: { user_id: u-1, name: A, role: consumer, area: south, status: active }" })))
      .toEqual(["members/m1/area dangling-reference"])
  })

  it("sites name existing members, areas and the member's delivery points", () => {
    const yaml = bundle({
      members: "members:\n  m1: { user_id: u-1, name: A, role: consumer, area: north, status: active, delivery_points: [{ id: P1, type: pod }] }\n  m2: { user_id: u-2, name: B, role: consumer, area: north, status: active, delivery_points: [{ id: P2, type: pod }] }",
      tail: "sites:\n  s1: { name: S, member: nobody, area: south }\n  s2: { name: S, area: north, delivery_point: P1 }\n  s3: { name: S, member: m1, area: north, delivery_point: P2 }\n  s4: { name: S, member: m1, area: north, delivery_point: P1 }"
    })
    expect(problems(yaml)).toEqual([
      "sites/s1/area dangling-reference",
      "sites/s1/member dangling-reference",
      "sites/s2/delivery_point dangling-reference",
      "sites/s3/delivery_point dangling-reference"
    ])
  })

  it("assets are at existing sites of their own member; meters on their member's delivery points", () => {
    const yaml = withAssets(
      "pv:\n  p1: { name: P, site: nowhere }\n  p2: { name: P, site: other }\n  p3: { name: P, site: shared }\n  p4: { name: P, site: home }\nmeter:\n  mt1: { name: M, sensor_id: s1, meter_type: import, pod: NOT-MINE }\n  mt2: { name: M, sensor_id: s2, meter_type: import, pod: POD-1 }",
      "sites:\n  other: { name: O, member: m2, area: north }\n  shared: { name: S, area: north }\n  home: { name: H, member: m1, area: north }"
    ).replace("members:\n", "members:\n  m2: { user_id: u-2, name: B, role: consumer, area: north, status: active }\n")
    expect(problems(yaml)).toEqual([
      "members/m1/assets/meter/mt1/pod dangling-reference",
      "members/m1/assets/pv/p1/site dangling-reference",
      "members/m1/assets/pv/p2/site dangling-reference"
    ])
  })

  it("relationships name assets of the community, never the asset itself", () => {
    const yaml = withAssets(
      "pv:\n  p1: { name: P, relationships: { paired_with: p1 } }\n  p2: { name: P, relationships: { paired_with: ghost } }\nmeter:\n  mt1: { name: M, sensor_id: s1, meter_type: import, relationships: { measures: [p1, mt1, ghost] } }"
    )
    expect(problems(yaml)).toEqual([
      "members/m1/assets/meter/mt1/relationships/measures/1 dangling-reference",
      "members/m1/assets/meter/mt1/relationships/measures/2 dangling-reference",
      "members/m1/assets/pv/p1/relationships/paired_with dangling-reference",
      "members/m1/assets/pv/p2/relationships/paired_with dangling-reference"
    ])
  })

  it("topology parents exist and form no cycle; areas name existing nodes", () => {
    const yaml = bundle({
      community: `community:
  id: c1
  name: C
  areas: { north: { name: N, topology: [a, ghost] } }
  topology:
    - { id: a, type: primary_substation }
    - { id: b, type: feeder, parent: c }
    - { id: c, type: feeder, parent: b }
    - { id: d, type: feeder, parent: nothing }`
    })
    expect(problems(yaml)).toEqual([
      "community/areas/north/topology/1 dangling-reference",
      "community/topology/1/parent dangling-reference",
      "community/topology/2/parent dangling-reference",
      "community/topology/3/parent dangling-reference"
    ])
    expect(check(yaml).problems[1]?.message).toContain("its own ancestor")
  })
})

describe("keys unique across the bundle", () => {
  it("user ids, asset keys of every member and type, delivery points, sensors and topology ids", () => {
    const yaml = bundle({
      community: "community:\n  id: c1\n  name: C\n  areas: { north: { name: N } }\n  topology: [{ id: t, type: feeder }, { id: t, type: feeder }]",
      members: `members:
  m1:
    user_id: same
    name: A
    role: prosumer
    area: north
    status: active
    delivery_points: [{ id: P1, type: pod }]
    assets:
      pv: { x: { name: P } }
      meter: { x2: { name: M, sensor_id: sensor, meter_type: import } }
  m2:
    user_id: same
    name: B
    role: consumer
    area: north
    status: active
    delivery_points: [{ id: P1, type: pod }]
    assets:
      storage: { x: { name: B } }
      meter: { y2: { name: M, sensor_id: sensor, meter_type: import } }`
    })
    expect(problems(yaml)).toEqual([
      "community/topology/1/id duplicate-key",
      "members/m2/assets/meter/y2/sensor_id duplicate-key",
      "members/m2/assets/storage/x duplicate-key",
      "members/m2/delivery_points/0/id duplicate-key",
      "members/m2/user_id duplicate-key"
    ])
  })

  it("a YAML mapping key given twice is a YAML problem with its position", () => {
    const [problem] = check(bundle() + "members: {}\n").problems
    expect(problem).toMatchObject({ code: "yaml", line: 11, column: 1 })
    expect(problem?.message).toContain("duplicated mapping key")
  })
})

describe("IRIs", () => {
  const typed = (type: string, head = "version: \"1\"\nschema_version: \"0.4\"") =>
    bundle({ head, members: `members:\n  m1: { user_id: u-1, name: A, role: consumer, area: north, status: active, type: "${type}" }` })

  it("a CURIE needs a declared or well-known prefix (the original stored peco:x unexpanded)", () => {
    expect(problems(typed("peco:Prosumer"))).toEqual([])
    expect(problems(typed("ex:Thing"))).toEqual(["members/m1/type unknown-prefix"])
    expect(problems(typed("ex:Thing", "version: \"1\"\nschema_version: \"0.4\"\ncontext: { prefixes: { ex: https://ex.example.org/ns# } }"))).toEqual([])
    expect(check(typed("ex:Thing", "version: \"1\"\nschema_version: \"0.4\"\ncontext: { prefixes: { ex: https://ex.example.org/ns# } }")).plan?.participants[0]?.type_iri)
      .toBe("https://ex.example.org/ns#Thing")
  })

  it("IRIs stay, relative ones need context.base_iri", () => {
    expect(problems(typed("https://schema.org/Person"))).toEqual([])
    expect(problems(typed("urn:example:person"))).toEqual([])
    expect(problems(typed("Person"))).toEqual(["members/m1/type invalid-value"])
    const based = check(typed("types/Person", "version: \"1\"\nschema_version: \"0.4\"\ncontext: { base_iri: https://rec.example.org/ }"))
    expect(based.plan?.participants[0]?.type_iri).toBe("https://rec.example.org/types/Person")
  })
})

describe("owners", () => {
  const owned = (owner: string) => withAssets(`pv:\n  p1: { name: P, owner: "${owner}" }`)

  it("name an owner of the owner registry (id, alias, URL) or are IRIs", () => {
    for (const owner of ["acme", "acme-alias", "https://acme.example.org", "did:web:other.example.org", "https://unknown.example.org"]) {
      expect(problems(owned(owner)), owner).toEqual([])
    }
    expect(problems(owned("nobody-we-know"))).toEqual(["members/m1/assets/pv/p1/owner unknown-owner"])
    expect(problems(bundle({ community: "community:\n  id: c1\n  name: C\n  owner: ghost\n  areas: { north: { name: N } }" })))
      .toEqual(["community/owner unknown-owner"])
  })
})

describe("values every part must hold", () => {
  it("finite numbers, text without NUL or unpaired surrogates, no __proto__ keys", () => {
    const yaml = withAssets("pv:\n  p1: { name: \"P\\0\", rated_power: .inf, orientation: .nan, note: \"\\ud800\" }") +
      "extra:\n  __proto__: { polluted: true }\n"
    expect(problems(yaml)).toEqual([
      "extra/__proto__ invalid-value",
      "members/m1/assets/pv/p1/name invalid-value",
      "members/m1/assets/pv/p1/note invalid-value",
      "members/m1/assets/pv/p1/orientation invalid-value",
      "members/m1/assets/pv/p1/rated_power invalid-value"
    ])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })
})

describe("YAML", () => {
  it("syntax errors are problems with their line and column", () => {
    const [problem] = check("version: \"1\"\ncommunity: [a, b\nmembers: {}\n").problems
    expect(problem).toMatchObject({ path: [], code: "yaml", line: 3 })
  })

  it("an empty file, several documents, a tab indentation", () => {
    expect(problems("")).toEqual([" yaml"])
    expect(problems("  \n# only a comment\n")).toEqual([" yaml"])
    expect(problems(bundle() + "---\nb: 1\n")).toEqual([" yaml"])
    expect(problems("a:\n\tb: 1\n")).toEqual([" yaml"])
  })

  it("dates and YAML 1.1 words stay strings (core schema)", () => {
    const plan = check(bundle({ head: "version: \"1\"\nschema_version: \"0.4\"\nmetadata: { created: 2024-01-01, description: yes }" })).plan!
    expect(plan.community.bundle["metadata"]).toEqual({ created: "2024-01-01", description: "yes" })
  })
})

describe("every problem at once", () => {
  it("schema errors, references, duplicates, prefixes, owners and values in one answer", () => {
    const yaml = bundle({
      head: "version: \"1\"\nschema_version: \"0.3\"",
      members: `members:
  m1: { user_id: u-1, name: A, role: operator, area: south, status: active, type: "zz:Person" }
  m2: { user_id: u-1, name: B, role: consumer, area: north, status: active, assets: { pv: { p: { name: P, owner: ghost, rated_power: -1, site: nowhere } } } }`
    })
    expect(check(yaml).problems.map((p) => `${p.path.join("/")} ${p.code} ${p.keyword ?? ""}`.trim())).toEqual([
      "members/m1/area dangling-reference",
      "members/m1/role schema enum",
      "members/m1/type unknown-prefix",
      "members/m2/assets/pv/p/owner unknown-owner",
      "members/m2/assets/pv/p/rated_power schema minimum",
      "members/m2/assets/pv/p/site dangling-reference",
      "members/m2/user_id duplicate-key",
      "schema_version schema const"
    ])
    expect(check(yaml).plan).toBeUndefined()
  })

  it("warns about unknown properties that look like typos, keeping them", () => {
    const checked = check(withAssets("pv:\n  p1: { name: P, rated_powr: 3 }").replace("status: active", "status: active\n    Name: x"))
    expect(checked.problems).toEqual([])
    expect(checked.warnings.map((w) => `${w.path.join("/")} ${w.message}`)).toEqual([
      "members/m1/Name unknown property \"Name\" kept as extra data (did you mean \"name\"?)",
      "members/m1/assets/pv/p1/rated_powr unknown property \"rated_powr\" kept as extra data (did you mean \"rated_power\"?)"
    ])
    expect(checked.plan?.assets[0]?.properties).toEqual({ rated_powr: 3 })
  })

  it("lists at most a thousand problems and says how many more there are", () => {
    const members = Array.from({ length: 1500 }, (_, i) => `  m${i}: { user_id: u-${i}, name: A, role: nobody, area: north, status: active }`)
    const checked = check(bundle({ members: `members:\n${members.join("\n")}` }))
    expect(checked.problems).toHaveLength(1000)
    expect(checked.problems[999]?.message).toBe("501 more problems are not listed; fix these and validate again")
  })
})

describe("parsing limits", () => {
  const quick = (run: () => void) => {
    const started = performance.now()
    run()
    return performance.now() - started
  }

  it("refuses 10,000 nested flow sequences, mappings and block levels before building anything", () => {
    const documents = [
      "[".repeat(10_000) + "]".repeat(10_000),
      "{a: ".repeat(10_000) + "1" + "}".repeat(10_000),
      Array.from({ length: 2_000 }, (_, i) => `${" ".repeat(i)}a:`).join("\n"),
      "- ".repeat(10_000) + "x",
      `community: ${"[".repeat(10_000)}`
    ]
    for (const document of documents) {
      const elapsed = quick(() => {
        const refused = refusal(document)
        expect(refused.limit).toBe("depth")
        expect(refused.detail).toContain("deeper than 64 levels")
      })
      expect(elapsed).toBeLessThan(2_000)
    }
  })

  it("refuses a billion laughs by its expansion, with few aliases", () => {
    let yaml = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    let previous = "a"
    for (const name of "bcdefghi") {
      yaml += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]\n`
      previous = name
    }
    const elapsed = quick(() => expect(refusal(yaml)).toMatchObject({ limit: "nodes" }))
    expect(elapsed).toBeLessThan(2_000)
  })

  it("refuses more than 100 aliases, an alias inside its own anchor, depth reached through aliases", () => {
    expect(refusal(`a: &a 1\nb: [${Array(101).fill("*a").join(", ")}]\n`)).toMatchObject({ limit: "aliases" })
    expect(refusal("a: &a [1, *a]\n")).toMatchObject({ limit: "cycle" })
    let deep = `l0: &l0 ${"[".repeat(60)}1${"]".repeat(60)}\n`
    for (let i = 1; i <= 3; i++) deep += `l${i}: &l${i} ${"[".repeat(60)}*l${i - 1}${"]".repeat(60)}\n`
    expect(refusal(deep)).toMatchObject({ limit: "depth" })
  })

  it("small alias use is fine", () => {
    expect(problems(withAssets("pv:\n  p1: &pv { name: P, rated_power: 3 }\n  p2: *pv"))).toEqual([])
  })

  it("refuses what is not UTF-8", () => {
    expect(refusal(new Uint8Array([0x76, 0x3a, 0x20, 0xff, 0xfe, 0x0a]))).toMatchObject({ limit: "encoding" })
  })

  it("survives hundreds of bombs in a row, each refused quickly", () => {
    const bombs = [
      "[".repeat(20_000),
      "{a: ".repeat(20_000),
      "a: &a [1, *a]\n",
      `a: &a x\nb: [${Array(200).fill("*a").join(",")}]`
    ]
    const started = performance.now()
    for (let i = 0; i < 400; i++) refusal(bombs[i % bombs.length]!)
    expect(performance.now() - started).toBeLessThan(20_000)
    expect(check(exampleText).problems).toEqual([])
  })
})

describe("problem shape", () => {
  it("paths are lists of keys and indexes, codes are the documented ones", () => {
    const checked = check(bundle({ members: "members:\n  m1: { user_id: u-1, name: A, role: x, area: north, status: active, delivery_points: [{ id: P, type: y }] }" }))
    const codes: ReadonlyArray<Domain.ProblemCode> = checked.problems.map((p) => p.code)
    expect(codes).toEqual(["schema", "schema"])
    expect(checked.problems[0]?.path).toEqual(["members", "m1", "delivery_points", 0, "type"])
  })
})
