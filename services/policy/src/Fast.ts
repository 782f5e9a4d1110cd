/**
 * The decision endpoints' fast routes (`FastRoutes` of the service kit): the common request,
 * answered without the router and `HttpApiBuilder`, which cost several times the decision
 * itself (docs/performance.md, "Policy service").
 *
 * A decision endpoint is answered here when, and only when, everything the contract's handler
 * (`Http.DecisionsLive`) would do can be done without I/O and ends in an answer:
 *
 * - the token was verified before and is still trusted (`TokenVerifier.cached`: same issuer,
 *   audience, expiry and signature checks, not expired, key still published), or there is no
 *   token where anonymous callers are admitted (`/authorize` with `POLICY_ALLOW_ANONYMOUS=true`);
 * - the body was read (the kit reads small bodies ahead), is JSON (by `Content-Type`, as the
 *   contract's decoder decides) and decodes with the endpoint's own payload schema (first tried
 *   with its hand-written twin in `Payloads`, checked against the schema by property tests);
 * - for `/authorize`, the resource type is one of the routed ones.
 *
 * Anything else is declined untouched and the contract's handler answers it: every 401, 400 and
 * 413 body comes from there. The decision itself is the same call (`Decisions.decide`: engine,
 * decision cache, audit record), its answer is encoded with the endpoint's success schema, and
 * its failures become the same error bodies (`Errors.fromDecision`). The kit adds the request
 * id, CORS headers and the access log line either way; with tracing on, fast routes are skipped.
 */
import { Authentication, TokenVerifier } from "@rec/auth"
import { type Decision, PolicyInput } from "@rec/policy"
import { FastRoutes, type RequestContext, type ServerRequest } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Api } from "./Api.js"
import * as Config from "./Config.js"
import { Decisions } from "./Decisions.js"
import * as Domain from "./Domain.js"
import * as Errors from "./Errors.js"
import * as Inputs from "./Inputs.js"
import * as Payloads from "./Payloads.js"

type Subject = PolicyInput.PolicySubject | null

interface Endpoint<A, I, S, SI> {
  readonly name: "authorize" | "datasetAccess" | "datasetFilters" | "pipelineTransition" | "dtAccess" | "dtEvent" | "userdataAccess"
  /** The endpoint's payload schema, and its hand-written decoder for the common case. */
  readonly payload: Schema.Schema<A, I>
  readonly decode: (json: unknown) => A | undefined
  /** Whether a request without a token is decided for the anonymous subject. */
  readonly anonymous: boolean
  /** The question, or `undefined` when the contract's handler would refuse the payload. */
  readonly question: (subject: Subject, requestId: string, payload: A) => Inputs.Question | undefined
  /** The answer, and its encoding with the endpoint's success schema. */
  readonly answer: (decision: Decision.Decision, requestId: string) => S
  readonly encode: (answer: S) => SI
}

const decided = (decision: Decision.Decision, requestId: string): Domain.DecisionResponse => ({
  allowed: decision.allowed,
  reason: decision.reason,
  request_id: requestId
})

/**
 * `Domain.DecisionResponse` encoded: a struct of a boolean and two strings encodes to the same
 * value, so the schema is not run for it (the tests compare both paths' bodies).
 */
const decidedEncoded = (answer: Domain.DecisionResponse): typeof Domain.DecisionResponse.Encoded => answer

const filtered = (decision: Decision.Decision, requestId: string): Domain.FiltersResponse => ({
  allowed: decision.allowed,
  // Denied: no filters, whatever the policy computed (as the contract's handler).
  filters: decision.allowed ? decision.filters ?? [] : [],
  reason: decision.reason,
  request_id: requestId
})

/** The body as the contract's decoder would read it, or `undefined` to decline. */
const jsonBody = (request: ServerRequest.ServerRequest): { readonly json: unknown } | undefined => {
  const type = request.headers["content-type"]
  if (type !== undefined && !type.toLowerCase().includes("application/json")) return undefined
  const text = request.textIfRead
  if (text === undefined) return undefined
  try {
    return { json: text === "" ? null : JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** An error of the contract as its handler's encoding sends it: status and `{detail}` body. */
const errorResponse = (error: Errors.InternalError | Errors.Unavailable) =>
  error instanceof Errors.Unavailable
    ? FastRoutes.errorJson(Errors.Unavailable, error)
    : FastRoutes.errorJson(Errors.InternalError, error)

export const layer = FastRoutes.layer(Effect.gen(function*() {
  const decisions = yield* Decisions
  const verifier = yield* TokenVerifier.TokenVerifier
  const { allowAnonymous } = yield* Config.settings

  const route = <A, I, S, SI>(endpoint: Endpoint<A, I, S, SI>): FastRoutes.FastRoute => {
    const decodeSchema = Schema.decodeUnknownEither(endpoint.payload)
    const decode = (json: unknown): A | undefined => endpoint.decode(json) ?? Either.getOrUndefined(decodeSchema(json))
    return FastRoutes.endpoint(Api, "decisions", endpoint.name, (request, info: RequestContext.RequestInfo) =>
      Effect.suspend(() => {
        const caller = Authentication.knownSubject(request.headers, verifier)
        if (caller === undefined || (Option.isNone(caller) && !endpoint.anonymous)) return Effect.succeed(undefined)
        const body = jsonBody(request)
        if (body === undefined) return Effect.succeed(undefined)
        const payload = decode(body.json)
        if (payload === undefined) return Effect.succeed(undefined)
        const subject = Option.isSome(caller) ? PolicyInput.subjectOf(caller.value) : null
        const question = endpoint.question(subject, info.requestId, payload)
        if (question === undefined) return Effect.succeed(undefined)
        // From here on the answer is this route's: the caller is known (as authentication would
        // record it for the audit record and the logs).
        if (Option.isSome(caller)) info.userId = caller.value.id
        return Effect.match(decisions.decide(question, request.headers["x-source-service"]), {
          onFailure: (error) => errorResponse(Errors.fromDecision(error)),
          onSuccess: (decision) => FastRoutes.json(endpoint.encode(endpoint.answer(decision, info.requestId)))
        })
      }))
  }

  return [
    route({
      name: "authorize",
      payload: Domain.AuthorizeRequest,
      decode: Payloads.authorize,
      anonymous: allowAnonymous,
      question: (subject, requestId, payload) => {
        const type = payload.resource.type
        return Domain.isResourceType(type) ? Inputs.authorize(subject, requestId, type, payload) : undefined
      },
      answer: decided,
      encode: decidedEncoded
    }),
    route({
      name: "datasetAccess",
      payload: Domain.DatasetAccessRequest,
      decode: Payloads.datasetAccess,
      anonymous: false,
      question: Inputs.datasetAccess,
      answer: decided,
      encode: decidedEncoded
    }),
    route({
      name: "datasetFilters",
      payload: Domain.DatasetFiltersRequest,
      decode: Payloads.datasetFilters,
      anonymous: false,
      question: Inputs.datasetFilters,
      answer: filtered,
      encode: Schema.encodeSync(Domain.FiltersResponse)
    }),
    route({
      name: "pipelineTransition",
      payload: Domain.PipelineTransitionRequest,
      decode: Payloads.pipelineTransition,
      anonymous: false,
      question: Inputs.pipelineTransition,
      answer: decided,
      encode: decidedEncoded
    }),
    route({
      name: "dtAccess",
      payload: Domain.DtAccessRequest,
      decode: Payloads.dtAccess,
      anonymous: false,
      question: Inputs.dtAccess,
      answer: decided,
      encode: decidedEncoded
    }),
    route({
      name: "dtEvent",
      payload: Domain.DtEventRequest,
      decode: Payloads.dtEvent,
      anonymous: false,
      question: Inputs.dtEvent,
      answer: decided,
      encode: decidedEncoded
    }),
    route({
      name: "userdataAccess",
      payload: Domain.UserdataAccessRequest,
      decode: Payloads.userdataAccess,
      anonymous: false,
      question: Inputs.userdataAccess,
      answer: decided,
      encode: decidedEncoded
    })
  ]
}))
