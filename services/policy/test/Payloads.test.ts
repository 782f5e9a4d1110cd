/**
 * The hand-written payload decoders of the fast routes against the schemas they stand for: on
 * generated valid bodies and on mutations of them (fields replaced by any JSON value, removed,
 * added, whole bodies replaced), a decoder accepts exactly what its schema accepts and returns
 * the same value. (A body with a `__proto__` key in a record is left to the schema.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Domain } from "@rec/policy-service"
import * as Payloads from "@rec/policy-service/Payloads"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"

/** A plain JSON value, as `JSON.parse` gives it. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null")

const hasProtoKey = (value: unknown): boolean =>
  typeof value === "object" && value !== null &&
  (Object.keys(value).includes("__proto__") || Object.values(value).some(hasProtoKey))

type Mutation = readonly ["replace" | "remove" | "add" | "nested", number, unknown]

/** Changes one field (or one field of a nested object) of a body. */
const mutate = (body: unknown, [kind, index, value]: Mutation): unknown => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return value
  const copy: Record<string, unknown> = { ...body }
  const keys = Object.keys(copy)
  const key = keys.length === 0 ? "x" : keys[index % keys.length]
  switch (kind) {
    case "replace":
      copy[key] = value
      break
    case "remove":
      delete copy[key]
      break
    case "add":
      copy[`extra${index}`] = value
      break
    case "nested":
      copy[key] = mutate(copy[key], ["replace", index >> 3, value])
      break
  }
  return copy
}

const mutation: FastCheck.Arbitrary<Mutation> = FastCheck.tuple(
  FastCheck.constantFrom<Mutation[0]>("replace", "remove", "add", "nested"),
  FastCheck.nat(64),
  FastCheck.oneof(
    FastCheck.jsonValue(),
    FastCheck.constantFrom("", "x".repeat(129), "x".repeat(257), "x".repeat(513), "read", "open", null, [], {})
  )
)

const cases = [
  ["authorize", Domain.AuthorizeRequest, Payloads.authorize],
  ["datasetAccess", Domain.DatasetAccessRequest, Payloads.datasetAccess],
  ["datasetFilters", Domain.DatasetFiltersRequest, Payloads.datasetFilters],
  ["pipelineTransition", Domain.PipelineTransitionRequest, Payloads.pipelineTransition],
  ["dtAccess", Domain.DtAccessRequest, Payloads.dtAccess],
  ["dtEvent", Domain.DtEventRequest, Payloads.dtEvent],
  ["userdataAccess", Domain.UserdataAccessRequest, Payloads.userdataAccess]
] as const

describe("hand-written payload decoders", () => {
  for (const [name, schema, decode] of cases) {
    it(`${name}: the same answers as the schema`, () => {
      const decodeSchema = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>)
      const valid = Arbitrary.make(Schema.encodedSchema(schema as Schema.Schema<unknown, unknown>)).map(asJson)
      const bodies = FastCheck.oneof(
        valid,
        FastCheck.tuple(valid, mutation).map(([body, m]) => asJson(mutate(body, m))),
        FastCheck.tuple(valid, mutation, mutation).map(([body, m1, m2]) => asJson(mutate(mutate(body, m1), m2))),
        FastCheck.jsonValue()
      )
      let accepted = 0
      FastCheck.assert(
        FastCheck.property(bodies, (body) => {
          const fast = (decode as (u: unknown) => unknown)(body)
          const slow = decodeSchema(body)
          if (hasProtoKey(body)) {
            // Left to the schema where it matters (records); ignored like any key elsewhere.
            if (fast !== undefined) expect(Either.getOrUndefined(slow)).toEqual(fast)
          } else if (Either.isRight(slow)) {
            accepted++
            expect(fast).toEqual(slow.right)
          } else {
            expect(fast).toBeUndefined()
          }
        }),
        { numRuns: 3000 }
      )
      // The generated bodies reach both outcomes.
      expect(accepted).toBeGreaterThan(100)
    })
  }

  it("defaults, dropped keys and copies, on examples", () => {
    const attributes = { access_level: "open" }
    const body = { resource: { type: "dataset", id: "d", attributes, extra: 1 }, action: { name: "read" }, color: "red" }
    const decoded = Payloads.authorize(body)
    expect(decoded).toEqual({
      resource: { type: "dataset", id: "d", attributes: { access_level: "open" } },
      action: { name: "read", context: {} },
      context: {}
    })
    expect(decoded?.resource.attributes).not.toBe(attributes)
    expect(Payloads.datasetAccess({ dataset_id: "d", access_level: "open" })).toEqual({
      dataset_id: "d",
      access_level: "open",
      action: "read"
    })
    expect(Payloads.dtEvent({ dt_id: "t", event_type: "e" })).toEqual({ dt_id: "t", event_type: "e", simulation_state: null })
    expect(Payloads.authorize(JSON.parse("{\"resource\":{\"type\":\"d\",\"id\":\"x\",\"attributes\":{\"__proto__\":{}}},\"action\":{\"name\":\"r\"}}")))
      .toBeUndefined()
  })
})
