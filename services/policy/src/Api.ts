/**
 * The policy service's HTTP contract (spec part A, section 4). Other services and tests derive
 * typed clients from it (`HttpApiClient.make(Api)`).
 *
 * - `decisions`: every authorization endpoint; a bearer JWT is required (401 `{detail}`), except
 *   that `/authorize` admits anonymous callers when `POLICY_ALLOW_ANONYMOUS=true`. A denial is
 *   HTTP 200 with `allowed: false`.
 * - `mqtt`: mosquitto-go-auth's HTTP and remote-JWT backends; 200 allows, 403 denies, bodies
 *   `{ok, reason}`; the JWT comes from `Authorization: Bearer` or the body.
 * - `system`: health, readiness and the admin-only reload.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"
import * as Errors from "./Errors.js"

const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "An access token of the platform's identity provider.")
)

const AuthFailure = Schema.Union(Errors.Unauthorized, Errors.Unavailable)

/** A valid bearer JWT is required; provides the caller. */
export class PolicyAuth extends HttpApiMiddleware.Tag<PolicyAuth>()("PolicyAuth", {
  failure: AuthFailure,
  provides: Authentication.CurrentSubject,
  security: { bearer }
}) {}

/**
 * Like `PolicyAuth`, but without any token the caller is anonymous (`None`) when
 * `POLICY_ALLOW_ANONYMOUS=true`; an invalid token is always 401.
 */
export class PolicyAuthOptional extends HttpApiMiddleware.Tag<PolicyAuthOptional>()("PolicyAuthOptional", {
  failure: AuthFailure,
  provides: Authentication.MaybeSubject,
  security: { bearer }
}) {}

const decision = <const Name extends string, const Path extends HttpApiEndpoint.PathSegment>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setHeaders(Domain.DecisionHeaders)
    .addSuccess(Domain.DecisionResponse)

export class DecisionsGroup extends HttpApiGroup.make("decisions")
  .add(
    decision("authorize", "/authorize")
      .setPayload(Domain.AuthorizeRequest)
      .middleware(PolicyAuthOptional)
      .annotate(OpenApi.Summary, "Decide on any resource; routed by resource.type")
  )
  .add(
    decision("datasetAccess", "/dataset/access")
      .setPayload(Domain.DatasetAccessRequest)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "Dataset access (open, internal, restricted)")
  )
  .add(
    HttpApiEndpoint.post("datasetFilters", "/dataset/filters")
      .setHeaders(Domain.DecisionHeaders)
      .setPayload(Domain.DatasetFiltersRequest)
      .addSuccess(Domain.FiltersResponse)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "Row filters for reading a dataset (access is checked first)")
  )
  .add(
    decision("pipelineTransition", "/pipeline/transition")
      .setPayload(Domain.PipelineTransitionRequest)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "Pipeline state transition")
  )
  .add(
    decision("dtAccess", "/dt/access")
      .setPayload(Domain.DtAccessRequest)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "Digital twin access")
  )
  .add(
    decision("dtEvent", "/dt/event")
      .setPayload(Domain.DtEventRequest)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "May the caller emit a digital twin event")
  )
  .add(
    decision("userdataAccess", "/userdata/access")
      .setPayload(Domain.UserdataAccessRequest)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "User-owned data (dashboards, profiles, settings)")
  )
  .addError(Errors.BadRequest)
  .addError(Errors.InternalError)
  .addError(Errors.Unavailable)
  .annotate(OpenApi.Title, "Decisions")
{}

const mqttNote = "Token: `Authorization: Bearer <JWT>` (go-auth remote JWT mode), else a JWT in the " +
  "body's `password` or `username` (HTTP backend). Bodies may be JSON or form-encoded."

export class MqttGroup extends HttpApiGroup.make("mqtt")
  .add(
    HttpApiEndpoint.post("user", "/mqtt/user")
      .setPayload(Domain.MqttCredentials)
      .addSuccess(Domain.MqttResult)
      .annotate(OpenApi.Summary, "Authenticate an MQTT client (on CONNECT)")
      .annotate(OpenApi.Description, `No body needed with the token in the header. ${mqttNote}`)
  )
  .add(
    HttpApiEndpoint.post("acl", "/mqtt/acl")
      .setPayload(Domain.MqttAclRequest)
      .addSuccess(Domain.MqttResult)
      .annotate(OpenApi.Summary, "Topic access for publish/subscribe/read (acc mask)")
      .annotate(OpenApi.Description, `Every action of the acc mask is checked. ${mqttNote}`)
  )
  .add(
    HttpApiEndpoint.post("superuser", "/mqtt/superuser")
      .setPayload(Domain.MqttCredentials)
      .addSuccess(Domain.MqttResult)
      .annotate(OpenApi.Summary, "Is the MQTT client a superuser")
      .annotate(OpenApi.Description, `Optional body {username}. ${mqttNote}`)
  )
  .addError(Errors.MqttDenied)
  .addError(Errors.MqttUnavailable)
  .addError(Errors.BadRequest)
  .annotate(OpenApi.Title, "MQTT broker authentication")
{}

export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Domain.HealthResponse))
  .add(HttpApiEndpoint.get("ready", "/ready").addSuccess(Domain.ReadyResponse).addError(Domain.NotReady))
  .add(
    HttpApiEndpoint.post("reload", "/reload")
      .addSuccess(Domain.ReloadResponse)
      .addError(Domain.ReloadFailed)
      .addError(Errors.Forbidden)
      .addError(Errors.Unavailable)
      .middleware(PolicyAuth)
      .annotate(OpenApi.Summary, "Reload the policies from disk (admins: group admins or scope policy.admin)")
  )
  .annotate(OpenApi.Title, "Health and administration")
{}

export class Api extends Contract.make("policy")
  .add(DecisionsGroup)
  .add(MqttGroup)
  .add(SystemGroup)
  .annotate(OpenApi.Title, "REC policy decision service")
  .annotate(
    OpenApi.Description,
    "Authorization decisions with reasons, evaluated from the Rego policies of the platform."
  )
{}
