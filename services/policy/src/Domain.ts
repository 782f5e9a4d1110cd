/**
 * Request and response bodies of the policy service (spec part A, sections 2 and 4) and its
 * error bodies (section 7). Field names are the spec's, snake_case on the wire.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Decision } from "@rec/policy"
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(512))
const JsonObject = Schema.Record({ key: Schema.String, value: HttpErrors.AnyJson })
const emptyObject = () => ({})

// ---------------------------------------------------------------------------------------------
// Decisions

export const DecisionResponse = Schema.Struct({
  allowed: Schema.Boolean.annotations({ description: "Whether the action is permitted." }),
  reason: Schema.String.annotations({ description: "Human-readable explanation; one per decision." }),
  request_id: Schema.String.annotations({ description: "The request's X-Request-Id (or a generated one)." })
}).annotations({ identifier: "DecisionResponse" })
export type DecisionResponse = typeof DecisionResponse.Type

export const FiltersResponse = Schema.Struct({
  allowed: Schema.Boolean,
  filters: Schema.Array(Decision.Filter).annotations({
    description: "Row filters the caller must apply; empty when access is denied."
  }),
  reason: Schema.String,
  request_id: Schema.String
}).annotations({ identifier: "FiltersResponse" })
export type FiltersResponse = typeof FiltersResponse.Type

/** Resource types `/authorize` routes, and the package deciding each. */
export const packages = {
  dataset: "rec.dataset.access",
  pipeline: "rec.pipeline.state",
  dt: "rec.dt.access",
  topic: "rec.mqtt.acl",
  userdata: "rec.userdata.access"
} as const
export type ResourceType = keyof typeof packages

export const isResourceType = (type: string): type is ResourceType => Object.prototype.hasOwnProperty.call(packages, type)

export const rowFilterPackage = "rec.dataset.row_filter"

export const AuthorizeRequest = Contract.allErrors(Schema.Struct({
  resource: Schema.Struct({
    // A plain string, not an enum: an unknown type must reach the handler, which answers
    // 400 "Unknown resource type" (the original's enum turned it into a validation error).
    type: Schema.String.annotations({
      description: `One of ${Object.keys(packages).join(", ")}; anything else is 400.`,
      examples: ["dataset"]
    }),
    id: Id,
    attributes: Schema.optionalWith(JsonObject, { default: emptyObject }).annotations({
      description: "Resource attributes, e.g. `access_level` (open, internal, restricted) for datasets."
    })
  }),
  action: Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)).annotations({
      description: "For example read, write, admin, transition, emit_event, subscribe, publish (open-ended)."
    }),
    context: Schema.optionalWith(JsonObject, { default: emptyObject })
  }),
  context: Schema.optionalWith(JsonObject, { default: emptyObject }).annotations({
    description: "Free-form request context, passed to policies as `input.environment`."
  })
}).annotations({ identifier: "AuthorizeRequest" }))

export const AccessLevel = Schema.Literal("open", "internal", "restricted")

export const DatasetAccessRequest = Contract.allErrors(Schema.Struct({
  dataset_id: Id,
  access_level: AccessLevel,
  action: Schema.optionalWith(Schema.Literal("read", "write", "admin"), { default: () => "read" as const })
}).annotations({ identifier: "DatasetAccessRequest" }))

export const DatasetFiltersRequest = Contract.allErrors(Schema.Struct({
  dataset_id: Id,
  access_level: AccessLevel
}).annotations({ identifier: "DatasetFiltersRequest" }))

export const PipelineState = Schema.Literal("pending", "started", "running", "completed", "failed", "cancelled")

export const PipelineTransitionRequest = Contract.allErrors(Schema.Struct({
  pipeline_id: Id,
  from_state: PipelineState,
  to_state: PipelineState
}).annotations({ identifier: "PipelineTransitionRequest" }))

export const DtAccessRequest = Contract.allErrors(Schema.Struct({
  dt_id: Id,
  action: Schema.optionalWith(Schema.Literal("read", "write", "simulate", "admin"), { default: () => "read" as const })
}).annotations({ identifier: "DtAccessRequest" }))

export const DtEventRequest = Contract.allErrors(Schema.Struct({
  dt_id: Id,
  event_type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  simulation_state: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(256))), {
    default: () => null
  })
}).annotations({ identifier: "DtEventRequest" }))

export const UserdataAccessRequest = Contract.allErrors(Schema.Struct({
  resource_type: Schema.Literal("dashboard", "profile", "settings"),
  resource_id: Id,
  owner_id: Id,
  action: Schema.optionalWith(Schema.Literal("read", "write", "delete", "share"), { default: () => "read" as const }),
  shared_with: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "User ids the resource is shared with (read-only access)."
  }),
  shared_with_groups: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "Groups the resource is shared with (read-only access)."
  }),
  visibility: Schema.optional(Schema.Literal("private", "shared", "public")).annotations({
    description: "`public` dashboards are readable by every user."
  })
}).annotations({ identifier: "UserdataAccessRequest" }))

/** Optional headers of every decision endpoint (spec section 5). */
export const DecisionHeaders = Schema.Struct({
  "x-request-id": Schema.optional(Schema.String).annotations({ description: "Correlation id, echoed as request_id." }),
  "x-source-service": Schema.optional(Schema.String).annotations({
    description: "Name of the calling service, recorded in the audit log."
  })
})

// ---------------------------------------------------------------------------------------------
// MQTT (mosquitto-go-auth)

export const MqttResult = Schema.Struct({ ok: Schema.Boolean, reason: Schema.String }).annotations({
  identifier: "MqttResult"
})
export type MqttResult = typeof MqttResult.Type

/** `acc` bits: 1 read, 2 write (publish), 4 subscribe; form bodies send it as a string. */
export const AccMask = Schema.Union(Schema.Number, Schema.NumberFromString).pipe(
  Schema.int(),
  Schema.between(0, 7),
  Schema.annotations({ description: "1 read, 2 write (publish), 4 subscribe; combinations 3, 5, 6, 7." })
)

/**
 * `schema` documented as go-auth's HTTP backend sends it, form-encoded (its fields arrive as
 * strings, which the schemas here accept: `acc` is `AccMask`). `withEncoding`'s type admits only
 * schemas whose encoded side is all strings, hence the casts.
 */
const formEncoded = <A, I>(schema: Schema.Schema<A, I>, identifier: string): Schema.Schema<A, I> =>
  HttpApiSchema.withEncoding(schema as unknown as Schema.Schema<A, Record<string, string>>, { kind: "UrlParams" })
    .annotations({ identifier }) as unknown as Schema.Schema<A, I>

const MqttAclFields = Contract.allErrors(Schema.Struct({
  username: Schema.optional(Schema.String).annotations({
    description: "A JWT (used when no Authorization header is sent) or the MQTT user name (ignored)."
  }),
  topic: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(65535)),
  clientid: Schema.optionalWith(Schema.String, { default: () => "" }),
  acc: AccMask
}).annotations({ identifier: "MqttAclRequest" }))

/** JSON (go-auth's remote JWT mode) or form-encoded (its HTTP backend). */
export const MqttAclRequest = Schema.Union(MqttAclFields, formEncoded(MqttAclFields, "MqttAclForm"))

const MqttCredentialFields = Contract.allErrors(Schema.Struct({
  username: Schema.optional(Schema.String).annotations({ description: "A JWT, or the MQTT user name." }),
  password: Schema.optional(Schema.String).annotations({ description: "A JWT (the usual place for it)." }),
  clientid: Schema.optional(Schema.String)
}).annotations({ identifier: "MqttCredentials" }))

/**
 * The optional credential body of `/mqtt/user` and `/mqtt/superuser`: JSON (an object, `null`
 * or nothing, as go-auth's remote JWT mode sends with the token in `Authorization`) or
 * form-encoded (its HTTP backend).
 */
export const MqttCredentials = Schema.Union(
  Schema.NullOr(MqttCredentialFields),
  formEncoded(MqttCredentialFields, "MqttCredentialsForm")
)

/** The actions an `acc` mask asks for, in the order they are checked. */
export const accActions = (acc: number): ReadonlyArray<"subscribe" | "publish" | "read"> => {
  const out: Array<"subscribe" | "publish" | "read"> = []
  if ((acc & 4) !== 0) out.push("subscribe")
  if ((acc & 2) !== 0) out.push("publish")
  if ((acc & 1) !== 0) out.push("read")
  return out
}

// ---------------------------------------------------------------------------------------------
// Health and reload

export const HealthStatus = Schema.Literal("healthy", "degraded", "unhealthy").annotations({
  description: "healthy: policies loaded; degraded: serving the last good policies after a failed load; " +
    "unhealthy: no policies loaded."
})

const LoadFailureBody = Decision.LoadFailure

export const HealthDetails = Schema.Struct({
  policy_count: Schema.Number,
  packages: Schema.Array(Schema.String),
  loaded_at: Schema.optional(Schema.String),
  last_load_error: Schema.optional(LoadFailureBody)
})

export const HealthResponse = Schema.Struct({
  status: HealthStatus,
  version: Schema.String,
  policies_loaded: Schema.Boolean,
  details: HealthDetails
}).annotations({ identifier: "HealthResponse" })
export type HealthResponse = typeof HealthResponse.Type

export const CacheDetails = Schema.Struct({
  hits: Schema.Number,
  misses: Schema.Number,
  size: Schema.Number,
  max_size: Schema.Number,
  ttl_seconds: Schema.Number,
  enabled: Schema.Boolean
})

export const ReadyResponse = Schema.Struct({
  status: HealthStatus,
  version: Schema.String,
  policies_loaded: Schema.Boolean,
  details: Schema.Struct({ ...HealthDetails.fields, cache: CacheDetails })
}).annotations({ identifier: "ReadyResponse" })
export type ReadyResponse = typeof ReadyResponse.Type

/** 503 from `/ready`: the same body, so probes and operators see why. */
export class NotReady extends Schema.Class<NotReady>("NotReady")(
  ReadyResponse.fields,
  HttpApiSchema.annotations({ status: 503, description: "No policies are loaded." })
) {}

export const ReloadResponse = Schema.Struct({
  status: Schema.Literal("success"),
  policy_count: Schema.Number,
  packages: Schema.Array(Schema.String)
}).annotations({ identifier: "ReloadResponse" })

/** 422 from `/reload`: the files on disk do not compile; the previous policies stay in use. */
export class ReloadFailed extends Schema.Class<ReloadFailed>("ReloadFailed")(
  {
    status: Schema.Literal("error"),
    detail: Schema.String,
    errors: Schema.Array(Decision.LoadProblem),
    policy_count: Schema.Number.annotations({ description: "Policies of the set still in use." })
  },
  HttpApiSchema.annotations({ status: 422, description: "The policy files do not load; the previous policies stay in use." })
) {}
