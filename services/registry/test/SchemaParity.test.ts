/**
 * `schemas/community-bundle.v0.4.schema.json` and the loader's Effect Schema must agree: the same
 * fixtures pass, and the same fixtures fail for the same reasons (JSON path and keyword). This is
 * the check that keeps the two from drifting.
 */
import { BundleSchema, Bundles, Config, Domain } from "@rec/registry-service"
import { Ajv, type ErrorObject } from "ajv"
import addFormatsModule from "ajv-formats"
import { load } from "js-yaml"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { invalidFixtures, validFixtures } from "./fixtures.js"
import { exampleText, repoRoot } from "./helpers.js"

const jsonSchema = JSON.parse(fs.readFileSync(path.join(repoRoot, "schemas/community-bundle.v0.4.schema.json"), "utf8"))

// ajv-formats is CommonJS with `exports.default`: TypeScript (NodeNext) types the default import
// as the module object, while Vite hands over the plugin itself.
const addFormats: typeof addFormatsModule.default = addFormatsModule.default ?? addFormatsModule

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true })
addFormats(ajv)
const validate = ajv.compile(jsonSchema)

/** `$.a.b[0]['x y']` */
const jsonPath = (segments: ReadonlyArray<string | number>): string =>
  "$" + segments.map((s) => (typeof s === "number" ? `[${s}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? `.${s}` : `['${s}']`)).join("")

/** ajv's errors as `[json path, keyword]`, pointing at the property for required/unknown/named ones. */
const ajvViolations = (data: unknown): Array<string> => {
  if (validate(data)) return []
  return (validate.errors ?? [])
    // A refused property name is reported twice: the name's own rule, then `propertyNames`.
    .filter((error: ErrorObject) => (error as ErrorObject & { propertyName?: string }).propertyName === undefined)
    .map((error: ErrorObject) => {
      const segments: Array<string | number> = error.instancePath === ""
        ? []
        : error.instancePath.slice(1).split("/").map((segment) => {
          const key = segment.replace(/~1/g, "/").replace(/~0/g, "~")
          return /^\d+$/.test(key) ? Number(key) : key
        })
      if (error.keyword === "required") segments.push(String(error.params["missingProperty"]))
      if (error.keyword === "additionalProperties") segments.push(String(error.params["additionalProperty"]))
      if (error.keyword === "propertyNames") segments.push(String(error.params["propertyName"]))
      return `${jsonPath(segments)} ${error.keyword}`
    })
    .sort()
}

const checker = Bundles.make({ limits: Config.defaultLimits, knownOwner: (reference) => reference === "acme" })

const problemsOf = (yaml: string) => {
  const checked = checker.checkText(yaml)
  if (checked._tag === "Left") throw new Error(checked.left.detail)
  return checked.right.problems
}

/** The loader's schema problems as `[json path, keyword]` (references etc. are `BundleCheck`'s, tested apart). */
const loaderViolations = (yaml: string): Array<string> =>
  problemsOf(yaml).filter((p) => p.code === "schema").map((problem) => `${jsonPath(problem.path)} ${problem.keyword}`).sort()

const yamlValue = (yaml: string): unknown => load(yaml)

describe("community-bundle.v0.4.schema.json", () => {
  it("is a draft-07 schema ajv compiles in strict mode", () => {
    expect(jsonSchema.$schema).toBe("http://json-schema.org/draft-07/schema#")
    expect(ajv.validateSchema(jsonSchema)).toBe(true)
  })

  it("states the same properties, patterns and enums as the Effect Schema", () => {
    const d = jsonSchema.definitions
    const P = BundleSchema.Properties
    expect(Object.keys(jsonSchema.properties)).toEqual([...P.bundle])
    expect(Object.keys(d.metadata.properties)).toEqual([...P.metadata])
    expect(Object.keys(d.context.properties)).toEqual([...P.context])
    expect(Object.keys(d.community.properties)).toEqual([...P.community])
    expect(Object.keys(d.area.properties)).toEqual([...P.area])
    expect(Object.keys(d.location.properties)).toEqual([...P.location])
    expect(Object.keys(d.community.properties.legal.properties)).toEqual([...P.legal])
    expect(Object.keys(d.community.properties.links.properties)).toEqual([...P.links])
    expect(Object.keys(d.community.properties.contact.properties)).toEqual([...P.contact])
    expect(Object.keys(d.community.properties.settings.properties)).toEqual([...P.settings])
    expect(Object.keys(d.topologyNode.properties)).toEqual([...P.topologyNode])
    expect(Object.keys(d.member.properties)).toEqual([...P.member])
    expect(Object.keys(d.deliveryPoint.properties)).toEqual([...P.deliveryPoint])
    expect(Object.keys(d.assets.properties)).toEqual([...Domain.AssetTypes])
    expect(Object.keys(d.device.properties)).toEqual([...P.device])
    expect(Object.keys(d.relationships.properties)).toEqual([...P.relationships])
    expect(Object.keys(d.site.properties)).toEqual([...P.site])
    for (const type of Domain.AssetTypes) {
      expect(Object.keys(d[type].properties), type).toEqual([...BundleSchema.assetProperties(type)])
    }
    expect(d.key.pattern).toBe(BundleSchema.KEY_PATTERN)
    expect(d.deliveryPointId.pattern).toBe(BundleSchema.DELIVERY_POINT_PATTERN)
    expect(d.community.properties.id.pattern).toBe(BundleSchema.COMMUNITY_KEY_PATTERN)
    expect(d.context.properties.prefixes.propertyNames.pattern).toBe(BundleSchema.PREFIX_PATTERN)
    expect(d.member.properties.role.enum).toEqual([...Domain.Roles])
    expect(d.member.properties.status.enum).toEqual([...Domain.MemberStatuses])
    expect(jsonSchema.properties.schema_version.const).toBe(BundleSchema.SCHEMA_VERSION)
    // Closed objects are the ones BundleCheck closes.
    const closed = [d.context, d.assets]
    for (const definition of closed) expect(definition.additionalProperties).toBe(false)
    expect(BundleSchema.ClosedObjects.map((c) => c.properties)).toEqual([[...P.context], [...P.assets]])
  })

  it("accepts the example bundle (examples/it-energy-community.bundle.yaml)", () => {
    expect(ajvViolations(yamlValue(exampleText))).toEqual([])
    expect(problemsOf(exampleText)).toEqual([])
  })
})

describe("valid fixtures pass the JSON Schema and the loader", () => {
  for (const fixture of validFixtures) {
    it(fixture.name, () => {
      expect(ajvViolations(yamlValue(fixture.yaml))).toEqual([])
      expect(problemsOf(fixture.yaml)).toEqual([])
    })
  }
})

describe("invalid fixtures fail both for the same reasons", () => {
  for (const fixture of invalidFixtures) {
    it(fixture.name, () => {
      const expected = fixture.violations.map(([at, keyword]) => `${at} ${keyword}`).sort()
      expect(ajvViolations(yamlValue(fixture.yaml))).toEqual(expected)
      expect(loaderViolations(fixture.yaml)).toEqual(expected)
    })
  }
})
