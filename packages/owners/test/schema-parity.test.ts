/**
 * `schemas/owners.schema.json` and the loader's Effect Schema must agree: the same fixtures
 * pass, and the same fixtures fail for the same reasons (JSON path and keyword). This is the
 * check that keeps the two from drifting.
 */
import { Ajv, type ErrorObject } from "ajv"
import addFormatsModule from "ajv-formats"
import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Yaml from "yaml"
import { checkFile } from "../src/Loader.js"
import { DID_PATTERN, ORGANIZATION_PROPERTIES, OWNER_KEY_PATTERN, OWNER_PROPERTIES, OWNER_TYPES } from "../src/OwnerSchema.js"
import { formatJsonPath } from "../src/Problem.js"
import { invalidFixtures, validFixtures } from "./fixtures.js"

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../schemas/owners.schema.json")
const jsonSchema = JSON.parse(fs.readFileSync(schemaFile, "utf8"))

// ajv-formats is CommonJS with `exports.default`: TypeScript (NodeNext) types the default
// import as the module object, while Vite hands over the plugin itself.
const addFormats: typeof addFormatsModule.default = addFormatsModule.default ?? addFormatsModule

const ajv = new Ajv({ allErrors: true, strict: true })
addFormats(ajv)
const validate = ajv.compile(jsonSchema)

/** ajv's errors as `[json path, keyword]`, pointing at the property for required/unknown ones. */
const ajvViolations = (data: unknown): Array<string> => {
  if (validate(data)) return []
  return (validate.errors ?? []).map((error: ErrorObject) => {
    const segments: Array<string | number> = error.instancePath === ""
      ? []
      : error.instancePath.slice(1).split("/").map((segment) => {
        const key = segment.replace(/~1/g, "/").replace(/~0/g, "~")
        return /^\d+$/.test(key) ? Number(key) : key
      })
    if (error.keyword === "required") segments.push(String(error.params["missingProperty"]))
    if (error.keyword === "additionalProperties") segments.push(String(error.params["additionalProperty"]))
    return `${formatJsonPath(segments)} ${error.keyword}`
  }).sort()
}

const loaderViolations = (yaml: string): Array<string> =>
  checkFile({ file: "owners.yaml", text: yaml }).problems.map((problem) => `${problem.jsonPath} ${problem.rule}`).sort()

const yamlValue = (yaml: string): unknown => Yaml.parse(yaml) ?? null

describe("owners.schema.json", () => {
  it("is a draft-07 schema", () => {
    expect(jsonSchema.$schema).toBe("http://json-schema.org/draft-07/schema#")
    expect(ajv.validateSchema(jsonSchema)).toBe(true)
  })

  it("states the same patterns, types and property names as the Effect Schema", () => {
    const owner = jsonSchema.definitions.owner
    expect(jsonSchema.definitions.ownerKey.pattern).toBe(OWNER_KEY_PATTERN)
    expect(owner.properties.did.pattern).toBe(DID_PATTERN)
    expect(owner.properties.type.enum).toEqual([...OWNER_TYPES])
    expect(Object.keys(owner.properties)).toEqual([...OWNER_PROPERTIES])
    expect(Object.keys(owner.properties.organization.properties)).toEqual([...ORGANIZATION_PROPERTIES])
    expect(owner.required).toEqual(["id", "type", "name"])
    expect(owner.additionalProperties).toBe(false)
    expect(owner.properties.organization.additionalProperties).toBe(false)
    expect(owner.properties.organization.properties.create.default).toBe(false)
    expect(jsonSchema.additionalProperties).toBe(false)
    expect(jsonSchema.properties.owners.minItems).toBe(1)
  })

  it("accepts the spec's id pattern and the single-character form, nothing else", () => {
    const spec = /^[a-z0-9][a-z0-9-]*[a-z0-9]$/
    const single = /^[a-z0-9]$/
    const ours = new RegExp(OWNER_KEY_PATTERN)
    for (const candidate of ["a", "7", "ab", "a-b", "a--b", "-", "a-", "-a", "A", "a_b", "", "a b", "é"]) {
      expect(ours.test(candidate), candidate).toBe(spec.test(candidate) || single.test(candidate))
    }
  })
})

describe("valid fixtures pass the JSON Schema and the loader", () => {
  for (const fixture of validFixtures) {
    it(fixture.name, () => {
      expect(ajvViolations(yamlValue(fixture.yaml))).toEqual([])
      expect(loaderViolations(fixture.yaml)).toEqual([])
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

describe("defaults", () => {
  it("fills aliases and organization.create as the JSON Schema's defaults say", () => {
    const checked = checkFile({
      file: "owners.yaml",
      text: "owners:\n  - { id: acme, type: schema:NGO, name: Acme, organization: { role: rec } }\n"
    })
    expect(checked.problems).toEqual([])
    const [entry] = checked.entries
    expect(entry?.owner.aliases).toEqual(jsonSchema.definitions.owner.properties.aliases.default)
    expect(entry?.owner.organization?.create).toBe(false)
  })
})
