/**
 * Spans only when they are exported. With tracing off (no OTLP endpoint) Effect still makes every
 * span: an object with random ids and clock reads, and a copy of the fiber's whole context (every
 * service of the application) to make it the parent of what runs inside. Nobody sees those spans
 * (log lines carry trace ids only when spans are exported, and an incoming `traceparent` reaches
 * outbound calls through the request's own parent span), yet on a create they were a tenth of its
 * CPU (docs/performance.md, "Flexibility service", flex4). As `@rec/policy`'s engine does for
 * `PolicyEngine.decide`, the service decides once, from `Tracing.TracingEnabled`, whether its
 * spans are made: with tracing on every span is as before.
 */
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"

/** `Effect.withSpan(name, options)` when `tracing`, else the effect as it is. */
export const when = (tracing: boolean, name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => tracing ? Effect.withSpan(effect, name, options) : effect

const noStack = { captureStackTrace: false } as const

/**
 * The service's spans: named, with the attributes given, and without a call-site stack trace
 * (`withSpan` otherwise builds an `Error` per call for it, on every request; the name says where
 * it was). With `Effect.fnUntraced` this is what `Effect.fn` does, less that `Error`.
 */
export const named = (tracing: boolean) =>
(name: string, attributes?: Record<string, unknown>) =>
  when(tracing, name, attributes === undefined ? noStack : { attributes, captureStackTrace: false })
