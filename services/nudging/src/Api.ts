/**
 * The notification (nudging) service's HTTP contract (spec part B, section 4). The grid gateway,
 * the flexibility service and the participant web gateway derive their typed clients from it:
 *
 * ```ts
 * import { Api } from "@rec/nudging-service/Api"
 * const nudging = yield* HttpApiClient.make(Api, { baseUrl: "http://localhost:8016" })
 * const result = yield* nudging.ingest.ingestEvent({ payload: { event_type, user_id, facts } })
 * ```
 *
 * Every endpoint except the VAPID key and click tracking needs a bearer token (401 otherwise) and
 * is authorized by `policies/nudging/access.rego` (403, fail closed: 503 when no decision can be
 * made):
 *
 * - `ingest`, `scheduled`: service accounts with `nudging.ingest` or `nudging.admin`; users never;
 * - `notifications`, `preferences`, `webpush`: the user named by `user_id` (another user's
 *   notification is 404), or `nudging.admin` (services; users need the admins group too).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "@rec/auth"
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"

const ingestEndpoint = <const Name extends string, const Path extends HttpApiEndpoint.PathSegment>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(Domain.IngestEvent)
    .addSuccess(Domain.IngestDispatched)
    .addSuccess(Domain.IngestSuppressed)
    .addSuccess(Domain.NoMatchingRuleResponse)
    .addError(Domain.IngestRejected)
    .addError(Domain.IngestDeduplicated)
    .addError(Domain.IngestInvalidFacts)

const ingestDescription = "Evaluates the rules answering `event_type` against the facts, deduplicates per rule, " +
  "recipient, community and window, applies preferences and the daily cap, stores the notification and queues " +
  "its web push and e-mail deliveries. 200: at least one notification dispatched; 202: created, every one " +
  "suppressed by the orchestrator; 204: no rule answers the event type, or no rule's condition is met; 400: the " +
  "event type has rules but none for `facts.scenario`, or a rule could not be resolved; 409: every rule that " +
  "fired was deduplicated; 422: missing or invalid facts (`issues` names each). Several rules answering one event " +
  "each get an outcome; the status is that of the first of dispatched, suppressed, deduplicated, invalid_facts, " +
  "rejected among them (else 204). Callers: service accounts with `nudging.ingest` or `nudging.admin`."

/** At most this many events in one `POST /ingest-events/batch`. */
export const ingestBatchLimit = 500

export const IngestBatchRequest = Contract.allErrors(Schema.Struct({
  events: Schema.Array(Domain.IngestEvent).pipe(Schema.minItems(1), Schema.maxItems(ingestBatchLimit)).annotations({
    description: `1 to ${ingestBatchLimit} events, each as POST /ingest-event takes it`
  })
}).annotations({ identifier: "IngestBatchRequest" }))
export type IngestBatchRequest = typeof IngestBatchRequest.Type

export const IngestBatchResult = Schema.Struct({
  status: Schema.Literal(200, 202, 204, 400, 409, 422).annotations({
    description: "What POST /ingest-event would have answered for this event"
  }),
  event_type: Schema.String,
  user_id: Schema.String,
  community_id: Schema.NullOr(Schema.String),
  outcomes: Schema.Array(Domain.RuleOutcome),
  detail: Schema.String
}).annotations({ identifier: "IngestBatchResult" })
export type IngestBatchResult = typeof IngestBatchResult.Type

export const IngestBatch = Schema.Struct({
  results: Schema.Array(IngestBatchResult).annotations({ description: "One per event, in the request's order" })
}).annotations({ identifier: "IngestBatch" })
export type IngestBatch = typeof IngestBatch.Type

export class IngestGroup extends HttpApiGroup.make("ingest")
  .add(
    ingestEndpoint("ingestEvent", "/ingest-event")
      .annotate(OpenApi.Summary, "Ingest a digital twin event")
      .annotate(OpenApi.Description, ingestDescription)
  )
  .add(
    ingestEndpoint("adminIngestEvent", "/admin/ingest-event")
      .annotate(OpenApi.Summary, "Ingest a digital twin event (the original's path)")
      .annotate(OpenApi.Description, `The same as POST /ingest-event. ${ingestDescription}`)
  )
  .add(
    HttpApiEndpoint.post("ingestBatch", "/ingest-events/batch")
      .setPayload(IngestBatchRequest)
      .addSuccess(IngestBatch)
      .annotate(OpenApi.Summary, "Ingest several events at once")
      .annotate(
        OpenApi.Description,
        "Each event is ingested exactly as POST /ingest-event would ingest it (several at a time), and its result is " +
          "the status that endpoint would have answered with the outcomes: 200 as long as the batch itself was " +
          "taken. For callers that send many events, such as the flexibility service's settled commitments."
      )
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Ingest")
{}

const scheduleEndpoint = <const Name extends string, const Path extends HttpApiEndpoint.PathSegment>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(Domain.ScheduleRequest)
    .addSuccess(Domain.ScheduledCreated)
    .addSuccess(Domain.ScheduledReplaced)
    .addError(HttpErrors.UnprocessableEntity)
    .annotate(
      OpenApi.Description,
      "Ingests the event at `trigger_at` (as POST /ingest-event would; the answer's status and outcomes are kept " +
        "on the event). Upsert by `external_key`: scheduling a key again replaces the event and makes it pending. " +
        "Facts are checked as for ingest (422)."
    )

/** At most this many events in one `POST /scheduled-events/batch`. */
export const scheduleBatchLimit = 500

export const ScheduleBatchRequest = Contract.allErrors(Schema.Struct({
  events: Schema.Array(Domain.ScheduleRequest).pipe(Schema.minItems(1), Schema.maxItems(scheduleBatchLimit)).annotations({
    description: `1 to ${scheduleBatchLimit} events, each as POST /scheduled-events takes it`
  })
}).annotations({ identifier: "ScheduleBatchRequest" }))
export type ScheduleBatchRequest = typeof ScheduleBatchRequest.Type

export const ScheduledBatchItem = Schema.Struct({
  id: Schema.String,
  external_key: Schema.NullOr(Schema.String),
  created: Schema.Boolean.annotations({ description: "false: an event with this external_key existed and was replaced" })
}).annotations({ identifier: "ScheduledBatchItem" })

export const ScheduledBatch = Schema.Struct({
  created: Schema.Int,
  replaced: Schema.Int,
  events: Schema.Array(ScheduledBatchItem).annotations({
    description: "One per distinct event of the request, in its order (a key given twice counts once, its last event kept)"
  })
}).annotations({ identifier: "ScheduledBatch" })
export type ScheduledBatch = typeof ScheduledBatch.Type

export class ScheduledGroup extends HttpApiGroup.make("scheduled")
  .add(scheduleEndpoint("schedule", "/scheduled-events").annotate(OpenApi.Summary, "Schedule an event"))
  .add(
    scheduleEndpoint("adminSchedule", "/admin/scheduled-events")
      .annotate(OpenApi.Summary, "Schedule an event (the original's path)")
  )
  .add(
    HttpApiEndpoint.post("scheduleBatch", "/scheduled-events/batch")
      .setPayload(ScheduleBatchRequest)
      .addSuccess(ScheduledBatch)
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Schedule several events at once")
      .annotate(
        OpenApi.Description,
        "Each event as POST /scheduled-events would take it (upsert by `external_key`), all in one statement: " +
          "every event is stored, or none (422 naming each invalid event's facts as `events.<i>.facts.<name>`). " +
          "An `external_key` given twice keeps its last event. For callers that schedule many events, such as the " +
          "flexibility service's pre-window reminders."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/scheduled-events/:external_key")
      .setPath(Domain.ExternalKeyPath)
      .addSuccess(Domain.ScheduledEvent)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "A scheduled event by its external key")
  )
  .add(
    HttpApiEndpoint.del("cancel", "/scheduled-events/:external_key")
      .setPath(Domain.ExternalKeyPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.Conflict)
      .annotate(OpenApi.Summary, "Cancel a pending scheduled event")
      .annotate(OpenApi.Description, "204: cancelled (also when it already was); 409: it was already dispatched.")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Scheduled events")
{}

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("list", "/notifications")
      .setUrlParams(Domain.ListNotificationsParams)
      .addSuccess(Domain.NotificationPage)
      .annotate(OpenApi.Summary, "A user's notifications in a community, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/notifications/:id")
      .setPath(Domain.NotificationPath)
      .addSuccess(Domain.Notification)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "One notification delivery record")
  )
  .add(
    HttpApiEndpoint.post("markRead", "/notifications/:id/read")
      .setPath(Domain.NotificationPath)
      .addSuccess(Domain.Notification)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Mark a notification read (idempotent: the first read time is kept)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/notifications/:id")
      .setPath(Domain.NotificationPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(HttpErrors.NotFound)
      .annotate(OpenApi.Summary, "Delete a notification (soft: it disappears from every listing)")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Notifications")
{}

export class PreferencesGroup extends HttpApiGroup.make("preferences")
  .add(
    HttpApiEndpoint.get("get", "/preferences")
      .setUrlParams(Domain.PreferencesQuery)
      .addSuccess(Domain.Preferences)
      .annotate(OpenApi.Summary, "A user's preferences in a community (the defaults when none are stored)")
  )
  .add(
    HttpApiEndpoint.put("put", "/preferences")
      .setPayload(Domain.PreferencesUpdate)
      .addSuccess(Domain.Preferences)
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Change a user's preferences in a community")
  )
  .add(
    HttpApiEndpoint.get("kinds", "/preferences/kinds")
      .setUrlParams(Domain.KindsQuery)
      .addSuccess(Schema.Array(Domain.KindInfo))
      .annotate(OpenApi.Summary, "The kinds of notification, which can be turned off, in a language")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Preferences")
{}

export class WebPushGroup extends HttpApiGroup.make("webpush")
  .add(
    HttpApiEndpoint.post("subscribe", "/webpush/subscribe")
      .setPayload(Domain.SubscribeRequest)
      .addSuccess(Domain.PushSubscription)
      .addError(HttpErrors.UnprocessableEntity)
      .annotate(OpenApi.Summary, "Register a browser push subscription (again: refreshes its keys, enables it)")
  )
  .add(
    HttpApiEndpoint.post("unsubscribe", "/webpush/unsubscribe")
      .setPayload(Domain.UnsubscribeRequest)
      .addSuccess(Domain.UnsubscribeResult)
      .annotate(OpenApi.Summary, "Remove a user's push subscription(s) in a community")
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/webpush/send-test")
      .setPayload(Domain.SendTestRequest)
      .addSuccess(Domain.SendTestResult)
      .annotate(OpenApi.Summary, "Send a test push to the user's subscriptions in a community")
  )
  .addError(HttpErrors.Forbidden)
  .addError(HttpErrors.InternalServerError)
  .addError(HttpErrors.ServiceUnavailable)
  .middleware(Authentication.Authentication)
  .annotate(OpenApi.Title, "Web push")
{}

export class PublicGroup extends HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("vapidPublicKey", "/webpush/vapid-public-key")
      .addSuccess(Domain.VapidPublicKey)
      .addError(HttpErrors.ServiceUnavailable)
      .annotate(OpenApi.Summary, "The VAPID public key browsers subscribe with")
  )
  .add(
    HttpApiEndpoint.get("trackClick", "/track/click")
      .setUrlParams(Domain.ClickQuery)
      .addSuccess(Domain.ClickRedirect)
      .addError(HttpErrors.NotFound)
      .addError(HttpErrors.ServiceUnavailable)
      .annotate(OpenApi.Summary, "Record a click on a notification and go to its page")
      .annotate(
        OpenApi.Description,
        "The token is the push payload's `data.click_token` (HMAC-signed, so it cannot be forged). The first " +
          "click is kept. 400 for a token that is malformed or not signed by this service."
      )
  )
  .annotate(OpenApi.Title, "Public")
{}

export class Api extends Contract.make("nudging")
  .add(IngestGroup)
  .add(ScheduledGroup)
  .add(NotificationsGroup)
  .add(PreferencesGroup)
  .add(WebPushGroup)
  .add(PublicGroup)
  .annotate(OpenApi.Title, "REC notification (nudging) service")
  .annotate(
    OpenApi.Description,
    "Ingests digital twin events, evaluates the nudging rules, deduplicates and orchestrates, and delivers " +
      "notifications by web push and e-mail; stores delivery records and per-user, per-community preferences."
  )
{}
