/**
 * The service's own spans (`Commitments`, `Access`, `CommitmentsRepo`) are made when spans are
 * exported (`Tracing.TracingEnabled`) and not otherwise (`Spans`): a recording tracer under
 * the whole service sees them on a create with tracing on, and none of them with it off (on the
 * contract's handler and on the fast route alike).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Tracing } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import { call, hourMs, iso, luca, serviceLayer, token } from "./support/Harness.js"

const ours = ["Commitments.create", "Access.allowed", "CommitmentsRepo.insert"]

/** A tracer that records the name of every span made, then makes it as the one it replaces. */
const recording = (names: Array<string>) =>
  Layer.unwrapEffect(Effect.map(Effect.tracer, (native) =>
    Layer.setTracer(Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return native.span(name, ...rest)
      },
      context: native.context
    }))))

const start = Math.ceil(Date.now() / hourMs) * hourMs + hourMs
const body = (suggestion: string) => ({ suggestion_id: suggestion, user_id: luca, period_start: iso(start), period_end: iso(start + hourMs) })

/** Two creates with one token: the first through the contract's handler, the second (tracing off) through the fast route. */
const creates = (prefix: string) =>
  Effect.gen(function*() {
    const t = yield* token("svc-flexibility")
    const first = yield* call("POST", "/api/commitments", { token: t, json: body(`${prefix}-1`) })
    const second = yield* call("POST", "/api/commitments", { token: t, json: body(`${prefix}-2`) })
    return [first.status, second.status]
  })

describe("the service's spans", () => {
  const traced: Array<string> = []
  layer(
    serviceLayer().pipe(Layer.provide(Layer.succeed(Tracing.TracingEnabled, true)), Layer.provide(recording(traced))),
    { excludeTestServices: true, timeout: "90 seconds" }
  )("with tracing on", (it) => {
    it.effect("a create makes Commitments.create, Access.allowed and CommitmentsRepo.insert", () =>
      Effect.gen(function*() {
        expect(yield* creates("spans-on")).toEqual([201, 201])
        for (const name of ours) expect(traced.filter((n) => n === name).length).toBeGreaterThanOrEqual(2)
      }))
  })

  const untraced: Array<string> = []
  layer(serviceLayer().pipe(Layer.provide(recording(untraced))), { excludeTestServices: true, timeout: "90 seconds" })(
    "with tracing off",
    (it) => {
      it.effect("a create makes none of them", () =>
        Effect.gen(function*() {
          expect(yield* creates("spans-off")).toEqual([201, 201])
          expect(untraced.filter((n) => ours.includes(n))).toEqual([])
          // The recording tracer is in place: other spans (the kit's, @effect/sql's) are still made.
          expect(untraced.length).toBeGreaterThan(0)
        }))
    }
  )
})
