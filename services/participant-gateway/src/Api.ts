/**
 * The participant web gateway's HTTP contract (spec 001 part C, section 4): the backend of the
 * participant web app, every route under `/api`. The token comes from the header an
 * authenticating reverse proxy sets (`X-Auth-Request-Access-Token`, `JWT_HEADER_NAME`) or
 * `Authorization: Bearer`; every route needs one, and `policies/participant_gateway` admits
 * users only (service accounts call the platform's services directly).
 *
 * The gateway calls the digital twin, the nudging and the flexibility services with the user's
 * own token, so each of them applies its own rules to the user; their failures are answered as
 * `@rec/platform`'s `Upstream` rule says (4xx kept, 5xx and unreachable 502, timeout 504).
 *
 * `GET|POST|DELETE /api/assistant/{path}` is a streaming proxy to the assistant, served as a raw
 * route beside this contract (`AssistantProxy`); it is documented here by `AssistantDocs`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Domain as Flexibility } from "@rec/flexibility-service"
import { Contract, HttpErrors, Upstream } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as AssistantDocs from "./AssistantDocs.js"
import * as Domain from "./Domain.js"

/** What an upstream's failure becomes (`Upstream.toHttpError`). */
const UpstreamErrors = Schema.Union(...Upstream.httpErrors)

export class ProfileGroup extends HttpApiGroup.make("profile")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Domain.Profile)
      .annotate(OpenApi.Summary, "The caller's profile: identity from the token, acceptance of the terms")
  )
  .add(
    HttpApiEndpoint.post("acceptTerms", "/me/terms")
      .addSuccess(Domain.Profile)
      .annotate(OpenApi.Summary, "Accept the current terms of use (idempotent)")
      .annotate(
        OpenApi.Description,
        "Records the acceptance of TERMS_VERSION with its time; accepting again keeps the first acceptance. " +
          "Answers the profile, now with `terms_accepted: true`."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Profile")
{}

export class OverviewGroup extends HttpApiGroup.make("overview")
  .add(
    HttpApiEndpoint.get("overview", "/overview")
      .setUrlParams(Contract.allErrors(Domain.OverviewParams))
      .addSuccess(Domain.Overview)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's energy in their community for a month, from the digital twin")
      .annotate(
        OpenApi.Description,
        "Read from the digital twin with the caller's token: the participant profile (community), the first asset " +
          "with a sensor (the meter), its 15-minute readings and its share of the community's shared energy over the " +
          "month. 404 when the caller is not a member of a community; a digital-twin failure is a 502 or 504."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Overview")
{}

const notificationPath = HttpApiSchema.param("id", Domain.NotificationPath.fields.id)

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("list", "/notifications")
      .setUrlParams(Domain.NotificationListParams)
      .addSuccess(Domain.NotificationPage)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's notifications in their community, newest first")
  )
  .add(
    HttpApiEndpoint.post("markRead")`/notifications/${notificationPath}/read`
      .addSuccess(Domain.Notification)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Mark a notification read (idempotent: the first read time is kept)")
      .annotate(OpenApi.Description, "Another user's notification is a 404, like one that does not exist.")
  )
  .add(
    HttpApiEndpoint.del("delete")`/notifications/${notificationPath}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Delete a notification (it disappears from every listing)")
      .annotate(OpenApi.Description, "Another user's notification is a 404, like one that does not exist.")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Notifications")
{}

const settingsTransaction = "Saved in this gateway and in the nudging service's preferences as one operation: the " +
  "nudging service is updated first, then the gateway; when the nudging service refuses or fails nothing changes and " +
  "the answer says why (its status kept for a 4xx, 502/504 otherwise); when the gateway cannot save, the nudging " +
  "preferences are put back as they were. A concurrent change of the same user's settings is a 409 (try again)."

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("get", "/settings")
      .addSuccess(Domain.Settings)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's settings, their notification preferences and push subscription status")
  )
  .add(
    HttpApiEndpoint.put("put", "/settings")
      .setPayload(Domain.SettingsRequest)
      .addSuccess(Domain.Settings)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Change the caller's settings")
      .annotate(OpenApi.Description, settingsTransaction)
  )
  .add(
    HttpApiEndpoint.get("vapidPublicKey", "/settings/vapid-public-key")
      .addSuccess(Domain.VapidPublicKey)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The VAPID public key the browser subscribes with (`applicationServerKey`)")
  )
  .add(
    HttpApiEndpoint.post("pushSubscribe", "/settings/push-subscribe")
      .setPayload(Domain.PushSubscribeRequest)
      .addSuccess(Domain.PushSubscribed)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Register the browser's push subscription (again: refreshes its keys)")
  )
  .add(
    HttpApiEndpoint.post("pushUnsubscribe", "/settings/push-unsubscribe")
      .setPayload(Domain.PushUnsubscribeRequest)
      .addSuccess(Domain.PushUnsubscribed)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Remove one push subscription (by endpoint) or all of the caller's")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Settings")
{}

const suggestionPath = HttpApiSchema.param("id", Flexibility.SuggestionId)
const commitmentPath = HttpApiSchema.param("id", Schema.UUID)

export class FlexibilityGroup extends HttpApiGroup.make("flexibility")
  .add(
    HttpApiEndpoint.get("suggestions", "/suggestions")
      .addSuccess(Schema.Array(Flexibility.Suggestion))
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's open flexibility windows")
  )
  .add(
    HttpApiEndpoint.post("respond")`/suggestions/${suggestionPath}/respond`
      .setPayload(Contract.allErrors(Flexibility.RespondRequest))
      .addSuccess(Flexibility.RespondResponse)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Accept (a commitment) or decline a suggestion")
  )
  .add(
    HttpApiEndpoint.get("commitments", "/commitments")
      .setUrlParams(Contract.allErrors(Flexibility.ListParams))
      .addSuccess(Flexibility.CommitmentPage)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's commitments, newest first")
  )
  .add(
    HttpApiEndpoint.post("commit", "/commitments")
      .setPayload(Contract.allErrors(Flexibility.CreateCommitment))
      .addSuccess(Flexibility.Commitment, { status: 201 })
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Commit to a flexibility window")
  )
  .add(
    HttpApiEndpoint.get("commitment")`/commitments/${commitmentPath}`
      .addSuccess(Flexibility.Commitment)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "One of the caller's commitments")
  )
  .add(
    HttpApiEndpoint.del("cancel")`/commitments/${commitmentPath}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "Cancel one of the caller's commitments")
  )
  .add(
    HttpApiEndpoint.get("points", "/points")
      .addSuccess(Domain.Points)
      .addError(UpstreamErrors)
      .annotate(OpenApi.Summary, "The caller's points: earned by settled commitments, estimated for open ones")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Flexibility")
  .annotate(
    OpenApi.Description,
    "The flexibility service's user routes, called with the caller's token (the spec says the flexibility service is " +
      "reached through this gateway)."
  )
{}

export class Api extends Contract.make("participant-gateway")
  .add(ProfileGroup)
  .add(OverviewGroup)
  .add(NotificationsGroup)
  .add(SettingsGroup)
  .add(FlexibilityGroup)
  .addError(HttpErrors.InternalServerError)
  .prefix("/api")
  .annotate(OpenApi.Title, "REC participant web gateway")
  .annotate(
    OpenApi.Description,
    "Backend of the participant web app: profile and terms, the community energy overview, notifications, " +
      "settings with web push, flexibility, and a streaming proxy to the assistant (`/api/assistant/{path}`)."
  )
  .annotate(OpenApi.Transform, AssistantDocs.transform)
{}
