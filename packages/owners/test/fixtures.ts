/**
 * Registry files for the schema rules: each valid one must pass both the JSON Schema and the
 * loader; each invalid one must fail both, with exactly the listed violations (JSON path and
 * JSON Schema keyword).
 */

export interface ValidFixture {
  readonly name: string
  readonly yaml: string
}

export interface InvalidFixture extends ValidFixture {
  /** `[json path, keyword]`, sorted. */
  readonly violations: ReadonlyArray<readonly [string, string]>
}

const owner = (body: string) => `owners:\n  - ${body.trim().split("\n").join("\n    ")}\n`

const minimal = "id: acme\ntype: schema:Corporation\nname: Acme"

export const validFixtures: ReadonlyArray<ValidFixture> = [
  { name: "minimal entry", yaml: owner(minimal) },
  {
    name: "every field",
    yaml: owner(`
id: northgrid-dso
type: schema:Corporation
name: NorthGrid Distribution
did: did:web:northgrid.example.org
url: https://northgrid.example.org/about?lang=en#top
aliases: [dso, grid-operator, "7"]
organization:
  create: true
  role: dso
  attributes:
    network_id: ng-01
    country: "IT"`)
  },
  {
    name: "single-character id and alias",
    yaml: owner("id: a\ntype: schema:NGO\nname: A\naliases: [b, '9']")
  },
  { name: "digits and inner dashes", yaml: owner("id: 1-2--3\ntype: schema:NGO\nname: X") },
  { name: "empty organization block", yaml: owner(`${minimal}\norganization: {}`) },
  { name: "organization without create", yaml: owner(`${minimal}\norganization:\n  role: rec`) },
  { name: "empty aliases and attributes", yaml: owner(`${minimal}\naliases: []\norganization:\n  attributes: {}`) },
  { name: "non-http URI", yaml: owner(`${minimal}\nurl: urn:isbn:0451450523`) },
  { name: "did:web with port and path", yaml: owner(`${minimal}\ndid: did:web:example.org%3A3000:user:alice`) },
  {
    name: "every owner type",
    yaml: `owners:\n${
      [
        "schema:Corporation",
        "schema:GovernmentOrganization",
        "schema:ResearchOrganization",
        "schema:EducationalOrganization",
        "schema:NGO",
        "schema:Organization",
        "schema:Project"
      ].map((type, i) => `  - { id: o${i}, type: "${type}", name: "Owner ${i}" }`).join("\n")
    }\n`
  }
]

export const invalidFixtures: ReadonlyArray<InvalidFixture> = [
  // root
  { name: "empty file", yaml: "", violations: [["$", "type"]] },
  { name: "root is a list", yaml: "- id: acme\n", violations: [["$", "type"]] },
  { name: "root is a string", yaml: "owners\n", violations: [["$", "type"]] },
  { name: "owners missing", yaml: "{}\n", violations: [["$.owners", "required"]] },
  {
    name: "extra root property",
    yaml: `${owner(minimal)}version: 1\n`,
    violations: [["$.version", "additionalProperties"]]
  },
  { name: "owners empty", yaml: "owners: []\n", violations: [["$.owners", "minItems"]] },
  { name: "owners null", yaml: "owners:\n", violations: [["$.owners", "type"]] },
  { name: "owners a mapping", yaml: "owners: { acme: {} }\n", violations: [["$.owners", "type"]] },
  { name: "entry not a mapping", yaml: "owners: [acme]\n", violations: [["$.owners[0]", "type"]] },
  // required
  {
    name: "id missing",
    yaml: owner("type: schema:Corporation\nname: Acme"),
    violations: [["$.owners[0].id", "required"]]
  },
  { name: "type missing", yaml: owner("id: acme\nname: Acme"), violations: [["$.owners[0].type", "required"]] },
  {
    name: "name missing",
    yaml: owner("id: acme\ntype: schema:Corporation"),
    violations: [["$.owners[0].name", "required"]]
  },
  {
    name: "every required property missing",
    yaml: "owners:\n  - {}\n",
    violations: [["$.owners[0].id", "required"], ["$.owners[0].name", "required"], ["$.owners[0].type", "required"]]
  },
  // id
  ...[
    ["uppercase", "Acme"],
    ["underscore (allowed by the original, not by the spec)", "acme_energy"],
    ["leading dash", "-acme"],
    ["trailing dash", "acme-"],
    ["single dash", "-"],
    ["space", "acme energy"],
    ["dot", "acme.energy"],
    ["empty", ""],
    ["non-ASCII letter", "àcme"]
  ].map(([what, id]): InvalidFixture => ({
    name: `id with ${what}`,
    yaml: owner(`id: ${JSON.stringify(id)}\ntype: schema:Corporation\nname: Acme`),
    violations: [["$.owners[0].id", "pattern"]]
  })),
  {
    name: "id a number",
    yaml: owner("id: 42\ntype: schema:Corporation\nname: Acme"),
    violations: [["$.owners[0].id", "type"]]
  },
  {
    name: "id null",
    yaml: owner("id:\ntype: schema:Corporation\nname: Acme"),
    violations: [["$.owners[0].id", "type"]]
  },
  // type
  {
    name: "type not in the enum (the original's test case)",
    yaml: owner("id: acme\ntype: schema:Charity\nname: Acme"),
    violations: [["$.owners[0].type", "enum"]]
  },
  {
    name: "type without the schema: prefix",
    yaml: owner("id: acme\ntype: Corporation\nname: Acme"),
    violations: [["$.owners[0].type", "enum"]]
  },
  {
    name: "type as an expanded IRI",
    yaml: owner("id: acme\ntype: https://schema.org/Corporation\nname: Acme"),
    violations: [["$.owners[0].type", "enum"]]
  },
  {
    name: "type a list",
    yaml: owner("id: acme\ntype: [schema:Corporation]\nname: Acme"),
    violations: [["$.owners[0].type", "enum"]]
  },
  // name
  {
    name: "name empty",
    yaml: owner("id: acme\ntype: schema:Corporation\nname: ''"),
    violations: [["$.owners[0].name", "minLength"]]
  },
  {
    name: "name a number",
    yaml: owner("id: acme\ntype: schema:Corporation\nname: 1984"),
    violations: [["$.owners[0].name", "type"]]
  },
  // did
  ...[
    ["another DID method", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"],
    ["nothing after did:web:", "did:web:"],
    ["uppercase method", "DID:web:example.org"],
    ["a URL", "https://example.org"]
  ].map(([what, did]): InvalidFixture => ({
    name: `did: ${what}`,
    yaml: owner(`${minimal}\ndid: ${JSON.stringify(did)}`),
    violations: [["$.owners[0].did", "pattern"]]
  })),
  { name: "did empty (null)", yaml: owner(`${minimal}\ndid:`), violations: [["$.owners[0].did", "type"]] },
  // url
  ...[
    ["no scheme", "example.org"],
    ["spaces", "not a url"],
    ["relative path", "/about"]
  ].map(([what, url]): InvalidFixture => ({
    name: `url: ${what}`,
    yaml: owner(`${minimal}\nurl: ${JSON.stringify(url)}`),
    violations: [["$.owners[0].url", "format"]]
  })),
  { name: "url a number", yaml: owner(`${minimal}\nurl: 8080`), violations: [["$.owners[0].url", "type"]] },
  // organization
  {
    name: "organization misspelled organisation (the original's test case)",
    yaml: owner(`${minimal}\norganisation:\n  create: true`),
    violations: [["$.owners[0].organisation", "additionalProperties"]]
  },
  {
    name: "organization a string",
    yaml: owner(`${minimal}\norganization: rec`),
    violations: [["$.owners[0].organization", "type"]]
  },
  {
    name: "organization with an unknown property",
    yaml: owner(`${minimal}\norganization:\n  create: true\n  enabled: true`),
    violations: [["$.owners[0].organization.enabled", "additionalProperties"]]
  },
  {
    name: "organization.create a YAML 1.1 boolean word",
    yaml: owner(`${minimal}\norganization:\n  create: yes`),
    violations: [["$.owners[0].organization.create", "type"]]
  },
  {
    name: "organization.create a string",
    yaml: owner(`${minimal}\norganization:\n  create: "true"`),
    violations: [["$.owners[0].organization.create", "type"]]
  },
  {
    name: "organization.role empty",
    yaml: owner(`${minimal}\norganization:\n  role: ""`),
    violations: [["$.owners[0].organization.role", "minLength"]]
  },
  {
    name: "organization.role a list",
    yaml: owner(`${minimal}\norganization:\n  role: [rec]`),
    violations: [["$.owners[0].organization.role", "type"]]
  },
  {
    name: "organization.attributes values that are not strings",
    yaml: owner(`${minimal}\norganization:\n  attributes:\n    region: 12\n    active: true\n    tags: [a]`),
    violations: [
      ["$.owners[0].organization.attributes.active", "type"],
      ["$.owners[0].organization.attributes.region", "type"],
      ["$.owners[0].organization.attributes.tags", "type"]
    ]
  },
  {
    name: "organization.attributes a list",
    yaml: owner(`${minimal}\norganization:\n  attributes: [region]`),
    violations: [["$.owners[0].organization.attributes", "type"]]
  },
  // aliases
  {
    name: "aliases a string",
    yaml: owner(`${minimal}\naliases: dso`),
    violations: [["$.owners[0].aliases", "type"]]
  },
  {
    name: "alias items breaking the id pattern",
    yaml: owner(`${minimal}\naliases: [ok, Not-Ok, bad_alias, "-x"]`),
    violations: [
      ["$.owners[0].aliases[1]", "pattern"],
      ["$.owners[0].aliases[2]", "pattern"],
      ["$.owners[0].aliases[3]", "pattern"]
    ]
  },
  {
    name: "alias item a number",
    yaml: owner(`${minimal}\naliases: [ok, 7]`),
    violations: [["$.owners[0].aliases[1]", "type"]]
  },
  // extra properties on entries
  {
    name: "urls instead of url (the original's malformed overlay)",
    yaml: owner(`${minimal}\nurls: https://acme.example.org`),
    violations: [["$.owners[0].urls", "additionalProperties"]]
  },
  {
    name: "top-level role (allowed by the original, not by the spec)",
    yaml: owner(`${minimal}\nrole: publisher`),
    violations: [["$.owners[0].role", "additionalProperties"]]
  },
  // several problems in one file, in several entries
  {
    name: "several problems at once",
    yaml: [
      "owners:",
      "  - id: Acme",
      "    type: schema:Charity",
      "    name: ''",
      "    homepage: https://acme.example.org",
      "  - id: ok",
      "    type: schema:NGO",
      "    name: Fine",
      "  - type: schema:NGO",
      "    name: No id",
      "    did: did:example:1",
      "    organization: { create: 1 }",
      "extra: true",
      ""
    ].join("\n"),
    violations: [
      ["$.extra", "additionalProperties"],
      ["$.owners[0].homepage", "additionalProperties"],
      ["$.owners[0].id", "pattern"],
      ["$.owners[0].name", "minLength"],
      ["$.owners[0].type", "enum"],
      ["$.owners[2].did", "pattern"],
      ["$.owners[2].id", "required"],
      ["$.owners[2].organization.create", "type"]
    ]
  }
]
