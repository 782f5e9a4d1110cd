import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as path from "node:path"
import { decodeRegistry, loadRegistry, overlayPathOf, registryFilesFor } from "../src/Loader.js"
import type { OwnersInvalid, Problem } from "../src/Problem.js"
import type { OwnerRegistry } from "../src/Registry.js"

const lines = (...rows: ReadonlyArray<string>) => `${rows.join("\n")}\n`

type Sources = ReadonlyArray<readonly [file: string, text: string]>

const decode = (sources: Sources) => decodeRegistry(sources.map(([file, text]) => ({ file, text })))

const registry = (...sources: Sources): OwnerRegistry =>
  Either.getOrThrowWith(decode(sources), (error) => new Error(error.message))

const problems = (...sources: Sources): ReadonlyArray<Problem> =>
  Either.match(decode(sources), {
    onLeft: (error: OwnersInvalid) => error.problems,
    onRight: () => {
      throw new Error("expected the registry to be invalid")
    }
  })

/** The 1-based column where `needle` starts in `row` (the `occurrence`-th time). */
const col = (row: string, needle: string, occurrence = 1): number => {
  let index = -1
  for (let i = 0; i < occurrence; i++) index = row.indexOf(needle, index + 1)
  if (index === -1) throw new Error(`${needle} not in ${row}`)
  return index + 1
}

/** `path rule` for compact assertions. */
const pathAndRule = (problem: Problem) => `${problem.jsonPath} ${problem.rule}`

/** `file:line:column path rule` for compact assertions. */
const summary = (problem: Problem) => `${problem.file}:${problem.line}:${problem.column} ${pathAndRule(problem)}`

const base = lines(
  "owners:",
  "  - id: acme",
  "    type: schema:Corporation",
  "    name: Acme Energy",
  "    did: did:web:acme.example.org",
  "    url: https://acme.example.org",
  "    aliases: [acme-energy]",
  "    organization:",
  "      create: true",
  "      role: rec",
  "  - id: city",
  "    type: schema:GovernmentOrganization",
  "    name: City of Springfield",
  "    url: https://springfield.example.org",
  "    organization:",
  "      create: true",
  "      role: org"
)

describe("overlay files", () => {
  it("replace an entry by id as a whole: fields the overlay omits are gone", () => {
    const merged = registry(
      ["owners.yaml", base],
      ["owners.local.yaml", lines("owners:", "  - id: acme", "    type: schema:NGO", "    name: Acme Foundation")]
    )
    const acme = Option.getOrThrow(merged.get("acme"))
    expect(acme).toEqual({ id: "acme", type: "schema:NGO", name: "Acme Foundation", aliases: [] })
    // The replaced entry's alias, DID and URL no longer resolve.
    expect(Option.isNone(merged.lookup("acme-energy"))).toBe(true)
    expect(Option.isNone(merged.lookup("did:web:acme.example.org"))).toBe(true)
    expect(merged.entries[0]?.source).toEqual({ file: "owners.local.yaml", index: 0, line: 2 })
    expect(merged.entries[0]?.replaces).toEqual(["owners.yaml"])
  })

  it("keep the base order and append new ids in overlay order", () => {
    const merged = registry(
      ["owners.yaml", base],
      [
        "owners.local.yaml",
        lines(
          "owners:",
          "  - { id: zeta, type: schema:NGO, name: Zeta }",
          "  - { id: city, type: schema:GovernmentOrganization, name: City }",
          "  - { id: alpha, type: schema:NGO, name: Alpha }"
        )
      ]
    )
    expect(merged.owners.map((owner) => owner.id)).toEqual(["acme", "city", "zeta", "alpha"])
    expect(Option.getOrThrow(merged.get("city")).name).toBe("City")
  })

  it("withdraw an organization with create: false", () => {
    const merged = registry(
      ["owners.yaml", base],
      [
        "owners.local.yaml",
        lines(
          "owners:",
          "  - id: city",
          "    type: schema:GovernmentOrganization",
          "    name: City of Springfield",
          "    organization: { create: false }"
        )
      ]
    )
    expect(merged.provisioned.map((owner) => owner.id)).toEqual(["acme"])
  })

  it("do not provision owners without an organization block", () => {
    const merged = registry(["owners.yaml", lines("owners:", "  - { id: lab, type: schema:ResearchOrganization, name: Lab }")])
    expect(merged.provisioned).toEqual([])
    expect(Option.getOrThrow(merged.get("lab")).organization).toBeUndefined()
  })

  it("apply in the order given, with three files", () => {
    const merged = registry(
      ["a.yaml", lines("owners:", "  - { id: x, type: schema:NGO, name: One }")],
      ["b.yaml", lines("owners:", "  - { id: x, type: schema:NGO, name: Two }")],
      ["c.yaml", lines("owners:", "  - { id: x, type: schema:NGO, name: Three }")]
    )
    expect(Option.getOrThrow(merged.get("x")).name).toBe("Three")
    expect(merged.entries[0]?.replaces).toEqual(["a.yaml", "b.yaml"])
  })

  it("are themselves validated against the schema, naming the overlay file", () => {
    const found = problems(
      ["owners.yaml", base],
      ["owners.local.yaml", lines("owners:", "  - id: city", "    type: schema:NGO", "    name: City", "    urls: https://x.example")]
    )
    expect(found.map(summary)).toEqual(["owners.local.yaml:5:5 $.owners[0].urls additionalProperties"])
    expect(found[0]?.message).toBe("unknown property \"urls\" (did you mean \"url\"?)")
  })
})

describe("registry-wide uniqueness", () => {
  it("rejects an id used twice in one file, pointing at the second", () => {
    const second = "  - { id: acme, type: schema:NGO, name: B }"
    const found = problems(["owners.yaml", lines("owners:", "  - { id: acme, type: schema:NGO, name: A }", second)])
    expect(found.map(summary)).toEqual([`owners.yaml:3:${col(second, "acme")} $.owners[1].id duplicate-id`])
    expect(found[0]?.message).toContain("already used by $.owners[0] (owners.yaml:2)")
  })

  it("rejects an alias equal to another owner's id", () => {
    const first = "  - { id: acme, type: schema:NGO, name: A, aliases: [city] }"
    const found = problems(["owners.yaml", lines("owners:", first, "  - { id: city, type: schema:NGO, name: C }")])
    expect(found.map(summary)).toEqual([`owners.yaml:2:${col(first, "city")} $.owners[0].aliases[0] duplicate-alias`])
    expect(found[0]?.message).toBe("alias \"city\" is already the id of owner \"city\" (owners.yaml:3)")
  })

  it("rejects an alias used by two owners", () => {
    const found = problems([
      "owners.yaml",
      lines(
        "owners:",
        "  - id: acme",
        "    type: schema:NGO",
        "    name: A",
        "    aliases: [operator]",
        "  - id: city",
        "    type: schema:NGO",
        "    name: C",
        "    aliases:",
        "      - city-hall",
        "      - operator"
      )
    ])
    expect(found.map(summary)).toEqual(["owners.yaml:11:9 $.owners[1].aliases[1] duplicate-alias"])
    expect(found[0]?.message).toBe("alias \"operator\" is already an alias of owner \"acme\" (owners.yaml:5)")
  })

  it("rejects an alias repeating the owner's own id, and an alias listed twice", () => {
    const found = problems([
      "owners.yaml",
      lines("owners:", "  - { id: acme, type: schema:NGO, name: A, aliases: [acme, x, x] }")
    ])
    expect(found.map((problem) => [problem.jsonPath, problem.message])).toEqual([
      ["$.owners[0].aliases[0]", "alias \"acme\" repeats the owner's own id"],
      ["$.owners[0].aliases[2]", "alias \"x\" is listed twice"]
    ])
  })

  it("detects collisions across files: an overlay alias against a base id", () => {
    const lab = "  - { id: lab, type: schema:NGO, name: Lab, aliases: [city] }"
    const found = problems(["owners.yaml", base], ["owners.local.yaml", lines("owners:", lab)])
    expect(found.map(summary)).toEqual([
      `owners.local.yaml:2:${col(lab, "city")} $.owners[0].aliases[0] duplicate-alias`
    ])
    expect(found[0]?.message).toBe("alias \"city\" is already the id of owner \"city\" (owners.yaml:11)")
  })

  it("detects collisions across files: a base alias against an overlay id", () => {
    const found = problems(
      ["owners.yaml", base],
      ["owners.local.yaml", lines("owners:", "  - { id: acme-energy, type: schema:NGO, name: Other }")]
    )
    expect(found.map(summary)).toEqual(["owners.yaml:7:15 $.owners[0].aliases[0] duplicate-alias"])
    expect(found[0]?.message).toContain("is already the id of owner \"acme-energy\" (owners.local.yaml:2)")
  })

  it("lets an overlay free an alias for another owner by replacing its holder", () => {
    const merged = registry(
      ["owners.yaml", base],
      [
        "owners.local.yaml",
        lines(
          "owners:",
          "  - { id: acme, type: schema:Corporation, name: Acme Energy }",
          "  - { id: acme-2, type: schema:Corporation, name: Acme Two, aliases: [acme-energy] }"
        )
      ]
    )
    expect(Option.getOrThrow(merged.lookup("acme-energy")).id).toBe("acme-2")
  })

  it("rejects a DID or a URL shared by two owners", () => {
    const found = problems([
      "owners.yaml",
      lines(
        "owners:",
        "  - { id: a, type: schema:NGO, name: A, did: 'did:web:x.example', url: 'https://x.example/' }",
        "  - { id: b, type: schema:NGO, name: B, did: 'did:web:x.example' }",
        "  - { id: c, type: schema:NGO, name: C, url: 'HTTPS://X.example' }"
      )
    ])
    expect(found.map(pathAndRule)).toEqual([
      "$.owners[1].did duplicate-did",
      "$.owners[2].url duplicate-url"
    ])
  })

  it("rejects an organization attribute named type, which the role sets", () => {
    const found = problems([
      "owners.yaml",
      lines(
        "owners:",
        "  - id: acme",
        "    type: schema:NGO",
        "    name: A",
        "    organization:",
        "      role: rec",
        "      attributes:",
        "        type: dso"
      )
    ])
    expect(found.map(summary)).toEqual(["owners.yaml:8:9 $.owners[0].organization.attributes.type reserved-attribute"])
  })
})

describe("problem reports", () => {
  it("list every problem of every file at once, in file and line order, with positions", () => {
    const found = problems(
      [
        "owners.yaml",
        lines(
          "owners:",
          "  - id: acme",
          "    type: schema:Charity",
          "    name: Acme",
          "    aliases: [shared]",
          "  - id: Bad_Id",
          "    type: schema:NGO",
          "    name: ''",
          "  - id: dup",
          "    type: schema:NGO",
          "    name: One",
          "  - id: dup",
          "    type: schema:NGO",
          "    name: Two"
        )
      ],
      [
        "owners.local.yaml",
        lines(
          "owners:",
          "  - id: other",
          "    type: schema:NGO",
          "    name: Other",
          "    aliases: [ok, dup]",
          "    organisation: { create: true }"
        )
      ]
    )
    expect(found.map(summary)).toEqual([
      "owners.yaml:3:11 $.owners[0].type enum",
      "owners.yaml:6:9 $.owners[1].id pattern",
      "owners.yaml:8:11 $.owners[1].name minLength",
      "owners.yaml:12:9 $.owners[3].id duplicate-id",
      "owners.local.yaml:6:5 $.owners[0].organisation additionalProperties"
    ])
  })

  it("still checks uniqueness among the valid entries of an invalid file", () => {
    const found = problems([
      "owners.yaml",
      lines(
        "owners:",
        "  - { id: a, type: schema:NGO, name: A, aliases: [x] }",
        "  - { id: b, type: schema:Charity, name: B }",
        "  - { id: c, type: schema:NGO, name: C, aliases: [x] }"
      )
    ])
    expect(found.map(pathAndRule)).toEqual([
      "$.owners[1].type enum",
      "$.owners[2].aliases[0] duplicate-alias"
    ])
  })

  it("point a missing property at its entry and an empty value at its key", () => {
    const found = problems([
      "owners.yaml",
      lines("owners:", "  - type: schema:NGO", "    name: A", "    did:")
    ])
    expect(found.map(summary)).toEqual([
      "owners.yaml:2:5 $.owners[0].id required",
      "owners.yaml:4:5 $.owners[0].did type"
    ])
    expect(found.map((problem) => problem.message)).toEqual([
      "missing required property \"id\"",
      "expected a string, got null"
    ])
  })

  it("format as file:line:column path: message", () => {
    const entry = "  - { id: a, type: schema:NGO, name: '' }"
    const [problem] = problems(["conf/owners.yaml", lines("owners:", entry)])
    expect(problem?.format()).toBe(
      `conf/owners.yaml:2:${col(entry, "''")} $.owners[0].name: expected a non-empty string, got ""`
    )
  })

  it("report YAML syntax errors with their positions, per file, next to other files' problems", () => {
    const found = problems(
      ["owners.yaml", lines("owners:", "  - id: a", "    id: b", "    name: [unclosed")],
      ["owners.local.yaml", lines("owners: []")]
    )
    // The unclosed flow sequence is noticed where the input ends.
    expect(found.map((problem) => `${problem.file}:${problem.line} ${problem.rule}`)).toEqual([
      "owners.yaml:3 yaml",
      "owners.yaml:5 yaml",
      "owners.local.yaml:1 minItems"
    ])
    expect(found[0]?.message).toMatch(/unique/)
  })

  it("follow YAML anchors and aliases, locating problems at the anchored value", () => {
    const merged = registry([
      "owners.yaml",
      lines(
        "owners:",
        "  - { id: a, type: schema:NGO, name: A, organization: &org { create: true, role: rec } }",
        "  - { id: b, type: schema:NGO, name: B, organization: *org }"
      )
    ])
    expect(merged.provisioned.map((owner) => [owner.id, owner.organization?.role])).toEqual([["a", "rec"], ["b", "rec"]])

    const anchored = "  - { id: a, type: schema:NGO, name: A, organization: &org { create: 'yes' } }"
    const found = problems([
      "owners.yaml",
      lines("owners:", anchored, "  - { id: b, type: schema:NGO, name: B, organization: *org }")
    ])
    expect(found.map(summary)).toEqual([
      `owners.yaml:2:${col(anchored, "'yes'")} $.owners[0].organization.create type`,
      `owners.yaml:2:${col(anchored, "'yes'")} $.owners[1].organization.create type`
    ])
  })
})

describe("loading files", () => {
  const withTempDir = <A, E>(use: (dir: string, fs: FileSystem.FileSystem) => Effect.Effect<A, E, FileSystem.FileSystem>) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "owners-test-" })
      return yield* use(dir, fs)
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer))

  it.effect("loads owners.yaml and discovers its owners.local.yaml overlay", () =>
    withTempDir((dir, fs) =>
      Effect.gen(function*() {
        const file = path.join(dir, "owners.yaml")
        yield* fs.writeFileString(file, base)
        expect(yield* registryFilesFor(file)).toEqual([file])
        yield* fs.writeFileString(
          path.join(dir, "owners.local.yaml"),
          lines("owners:", "  - { id: city, type: schema:GovernmentOrganization, name: Renamed City }")
        )
        const files = yield* registryFilesFor(file)
        expect(files).toEqual([file, path.join(dir, "owners.local.yaml")])
        const loaded = yield* loadRegistry(files)
        expect(Option.getOrThrow(loaded.get("city")).name).toBe("Renamed City")
      })
    ))

  it.effect("reports an unreadable file together with the other files' problems", () =>
    withTempDir((dir, fs) =>
      Effect.gen(function*() {
        const good = path.join(dir, "owners.yaml")
        yield* fs.writeFileString(good, lines("owners:", "  - { id: a, type: schema:Charity, name: A }"))
        const missing = path.join(dir, "owners.local.yaml")
        const error = yield* Effect.flip(loadRegistry([good, missing]))
        expect(error._tag).toBe("OwnersInvalid")
        expect(error.problems.map((problem) => `${path.basename(problem.file)} ${problem.rule}`)).toEqual([
          "owners.yaml enum",
          "owners.local.yaml file"
        ])
        expect(error.problems[1]?.format()).toBe(`${missing}: file not found`)
        expect(error.message).toContain("owner registry invalid (2 problems):")
      })
    ))

  it("names the overlay of a registry file", () => {
    expect(overlayPathOf("owners.yaml")).toBe("owners.local.yaml")
    expect(overlayPathOf("/etc/rec/owners.yml")).toBe("/etc/rec/owners.local.yml")
    expect(overlayPathOf("registry/owners")).toBe("registry/owners.local")
  })
})
