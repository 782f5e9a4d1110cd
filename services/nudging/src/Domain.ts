/**
 * Request and response bodies of the notification (nudging) service (spec part B, sections 2
 * and 4; reference nudging-flexibility.md part B where the spec says "not shown"). Field names
 * are snake_case on the wire, as the spec and the original's callers spell them.
 *
 * Ingest answers carry one outcome per rule, also on 400/409/422 (`IngestRejected`,
 * `IngestDeduplicated`, `IngestInvalidFacts`): the literal `result` field tells a typed client
 * which body it got, next to the status.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// Shared pieces

/**
 * No NUL characters: PostgreSQL cannot store them in text, so a NUL in an id (`%00` in a path)
 * was a "database unavailable" 503 instead of a 400 (found by packages/hardening's fuzzing).
 */
const withoutNul = (s: string) => !s.includes("\u0000") || "must not contain NUL characters"

/** User ids are the identity provider's `sub`, or an `email-ingest:<16 hex>` recipient group. */
export const UserId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200), Schema.filter(withoutNul)).annotations({
  description: "The user's id (`sub` of their token), or `email-ingest:<16 hex>` for a group of e-mail recipients",
  examples: ["52409e36-6d23-45ed-bb1e-d6c564a2f454"]
})

/** A community id; empty means "no community". */
export const CommunityId = Schema.String.pipe(Schema.maxLength(200), Schema.filter(withoutNul)).annotations({
  description: "Community id; the empty string stands for \"no community\"",
  examples: ["it-energy-community"]
})

export const NotificationId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64), Schema.filter(withoutNul))

/** A timestamp on the wire: ISO 8601 in UTC. */
export const Timestamp = Schema.String.annotations({
  description: "ISO 8601 timestamp (UTC)",
  examples: ["2026-05-03T08:15:00.000Z"]
})

/**
 * An optional field: absent, or a value (not `undefined`, which JSON cannot send anyway), so a
 * wrong value is reported once, not once more as "Expected undefined".
 */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A JSON object of any content. */
export const JsonObject = Schema.Record({ key: Schema.String, value: HttpErrors.AnyJson })

/** Language tags of templates and preferences (`it`, `en`, `es`, `ca`, `it-IT`, ...). */
export const Language = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, {
    message: (issue) => `Expected a language tag such as "it" or "en-GB", actual ${JSON.stringify(issue.actual)}`
  })
).annotations({ description: "Language tag; templates fall back to the primary language, then the default language, then English" })

export const Severity = Schema.Literal("info", "warning", "critical")
export type Severity = typeof Severity.Type

export const RuleType = Schema.Literal("informative", "opportunity", "alert")
export type RuleType = typeof RuleType.Type

export const DedupWindow = Schema.Literal("once", "hourly", "daily", "weekly", "two_weeks", "monthly", "yearly", "always")
export type DedupWindow = typeof DedupWindow.Type

// ---------------------------------------------------------------------------------------------
// Ingest

export const IngestFacts = JsonObject.annotations({
  description: "Facts of the event. `facts_version` and `scenario` (non-empty strings) are required; " +
    "`time` (ISO 8601 date or date-time), `delta_pct`, `cur`, `prev` (numbers) are checked when present; " +
    "`lang` picks the template language; `email_recipients` (list of addresses) adds e-mail deliveries. " +
    "Each rule names the further facts it needs. Problems are answered 422 with one issue per fact.",
  examples: [{ facts_version: "1.0", scenario: "imported_up", time: "2026-05-03", delta_pct: 35.2, cur: 412.5, prev: 305.1 }]
})

export const IngestEvent = Contract.allErrors(Schema.Struct({
  event_type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)).annotations({
    description: "Event type; finds the rules that answer it",
    examples: ["imported_up"]
  }),
  user_id: optional(UserId).annotations({
    description: "Recipient. May be omitted when `facts.email_recipients` is given: the recipient is then the " +
      "`email-ingest:` group of those addresses."
  }),
  community_id: optional(Schema.NullOr(CommunityId)).annotations({
    description: "Community of the recipient (omitted, null or empty: none)"
  }),
  timestamp: optional(Timestamp).annotations({ description: "When the event happened (informative)" }),
  facts: IngestFacts
}).annotations({ identifier: "IngestEvent", title: "Digital twin event" }))
export type IngestEvent = typeof IngestEvent.Type

export const OutcomeKind = Schema.Literal(
  "dispatched",
  "suppressed",
  "deduplicated",
  "not_triggered",
  "invalid_facts",
  "rejected"
).annotations({
  description: "dispatched: a notification was created and delivered to the inbox and queued on every channel; " +
    "suppressed: created but held back by the orchestrator (preferences, daily cap); deduplicated: the rule " +
    "already notified this user in the current window; not_triggered: the rule's condition is not met; " +
    "invalid_facts: facts the rule needs are missing or invalid; rejected: the rule cannot be used for this " +
    "event (another scenario, a template that cannot be rendered)"
})
export type OutcomeKind = typeof OutcomeKind.Type

export const RuleOutcome = Schema.Struct({
  rule_id: Schema.String,
  outcome: OutcomeKind,
  reason: Schema.String.annotations({ description: "Why, in words" }),
  notification_id: Schema.NullOr(NotificationId).annotations({
    description: "The notification record written for this rule (also for suppressed and deduplicated outcomes)"
  }),
  delivery_ids: Schema.Array(Schema.String).annotations({ description: "Deliveries queued (web push, e-mail)" }),
  duplicate_of: Schema.NullOr(NotificationId).annotations({ description: "Deduplicated: the notification of the window" })
}).annotations({ title: "RuleOutcome" })
export type RuleOutcome = typeof RuleOutcome.Type

const ingestFields = {
  event_type: Schema.String,
  user_id: Schema.String.annotations({
    description: "The recipient: `user_id`, or the `email-ingest:` group of the recipients (empty when neither was usable)"
  }),
  community_id: Schema.NullOr(CommunityId),
  outcomes: Schema.Array(RuleOutcome).annotations({ description: "One outcome per rule answering the event type" })
}

/** 200: at least one notification was created and dispatched. */
export const IngestDispatched = Schema.Struct({
  result: Schema.Literal("dispatched"),
  ...ingestFields
}).annotations({
  identifier: "IngestDispatched",
  description: "A notification was created and at least one delivery dispatched",
  ...HttpApiSchema.annotations({ status: 200 })
})
export type IngestDispatched = typeof IngestDispatched.Type

/** 202: notifications were created, every one held back by the orchestrator. */
export const IngestSuppressed = Schema.Struct({
  result: Schema.Literal("suppressed"),
  ...ingestFields
}).annotations({
  identifier: "IngestSuppressed",
  description: "Notifications were created, but the orchestrator suppressed every delivery",
  ...HttpApiSchema.annotations({ status: 202 })
})
export type IngestSuppressed = typeof IngestSuppressed.Type

/** 204: no rule answers the event type, or no rule's condition is met. */
export class NoMatchingRule extends Schema.TaggedClass<NoMatchingRule>()("NoMatchingRule", {}) {}
export const NoMatchingRuleResponse = NoMatchingRule.pipe(
  HttpApiSchema.asEmpty({ status: 204, decode: () => new NoMatchingRule() })
).annotations({ description: "No rule answers the event type, or none of their conditions is met (no body)" })

const errorFields = { ...HttpErrors.fields, ...ingestFields }

export class IngestRejected extends Contract.UntaggedError<IngestRejected>()("IngestRejected", {
  result: Schema.Literal("rejected").pipe(Schema.propertySignature, Schema.withConstructorDefault(() => "rejected" as const)),
  ...errorFields
}, { status: 400, description: "Unknown scenario for the event type, or a rule could not be resolved (outcomes say which)" }) {}

export class IngestDeduplicated extends Contract.UntaggedError<IngestDeduplicated>()("IngestDeduplicated", {
  result: Schema.Literal("deduplicated").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "deduplicated" as const)
  ),
  ...errorFields
}, { status: 409, description: "Every rule that fired already notified this recipient in its window" }) {}

export class IngestInvalidFacts extends Contract.UntaggedError<IngestInvalidFacts>()("IngestInvalidFacts", {
  result: Schema.Literal("invalid_facts").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "invalid_facts" as const)
  ),
  ...errorFields
}, { status: 422, description: "Facts are missing or invalid; `issues` names each one" }) {}

export type IngestFailure = IngestRejected | IngestDeduplicated | IngestInvalidFacts

// ---------------------------------------------------------------------------------------------
// Notifications (delivery records)

export const NotificationStatus = Schema.Literal("dispatched", "suppressed", "deduplicated", "failed").annotations({
  description: "dispatched: in the inbox and queued on every channel (see `deliveries`); suppressed: held back " +
    "by the orchestrator (`reason`); deduplicated: the rule already notified the recipient in this window " +
    "(`duplicate_of`); failed: a recipient without an inbox (an e-mail group) whose every delivery failed"
})
export type NotificationStatus = typeof NotificationStatus.Type

export const Channel = Schema.Literal("webpush", "email")
export type Channel = typeof Channel.Type

export const DeliveryStatus = Schema.Literal("pending", "sending", "dispatched", "failed", "gone").annotations({
  description: "pending: waiting for its (next) attempt; sending: an attempt is under way; dispatched: the push " +
    "service or mail server accepted it; failed: given up (`error`); gone: the push subscription no longer exists " +
    "(404/410) and was disabled"
})
export type DeliveryStatus = typeof DeliveryStatus.Type

export const Delivery = Schema.Struct({
  id: Schema.String,
  channel: Channel,
  destination: Schema.String.annotations({ description: "Push subscription id, or the e-mail address" }),
  status: DeliveryStatus,
  attempts: Schema.Number,
  error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Timestamp),
  dispatched_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const Notification = Schema.Struct({
  id: NotificationId,
  rule_id: Schema.String,
  event_type: Schema.String,
  scenario: Schema.String,
  user_id: UserId,
  community_id: Schema.NullOr(CommunityId),
  family: Schema.String,
  type: RuleType,
  severity: Severity,
  kind: Schema.String,
  language: Schema.String,
  title: Schema.String,
  body: Schema.String,
  url: Schema.String.annotations({ description: "Where the app should take the user (relative to the app)" }),
  status: NotificationStatus,
  reason: Schema.NullOr(Schema.String).annotations({
    description: "Suppressed: notifications_disabled, kind_opted_out or daily_cap_reached; failed: the last error"
  }),
  duplicate_of: Schema.NullOr(NotificationId),
  dedup_window: DedupWindow,
  window_bucket: Schema.String.annotations({ description: "The deduplication window, e.g. 2026-05-03 for a daily rule" }),
  deliveries: Schema.Array(Delivery),
  created_at: Timestamp,
  read_at: Schema.NullOr(Timestamp),
  clicked_at: Schema.NullOr(Timestamp),
  click_action: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Notification", title: "Notification delivery record" })
export type Notification = typeof Notification.Type

export const maxPageSize = 100

const BooleanFromQuery = Schema.Literal("true", "false", "1", "0").pipe(
  Schema.transform(Schema.Boolean, {
    strict: true,
    decode: (s) => s === "true" || s === "1",
    encode: (b) => (b ? "true" : "false")
  })
)

export const NotificationStatusFilter = Schema.Union(NotificationStatus, Schema.Literal("all"))

export const ListNotificationsParams = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: CommunityId,
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxPageSize)),
    { exact: true, default: () => 20 }
  ).annotations({ description: `Page size, 1 to ${maxPageSize} (default 20)` }),
  offset: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 1_000_000)), {
    default: () => 0
  }),
  unread: Schema.optionalWith(BooleanFromQuery, { exact: true, default: () => false }).annotations({
    description: "true: only notifications not read yet"
  }),
  status: optional(NotificationStatusFilter).annotations({
    description: "Only this status; default every status except deduplicated (what the recipient was meant to get); " +
      "`all` includes deduplicated records"
  })
}).annotations({ identifier: "ListNotificationsParams" }))

export const NotificationPage = Schema.Struct({
  items: Schema.Array(Notification).annotations({ description: "Newest first; deleted notifications never" }),
  total: Schema.Number.annotations({ description: "Notifications matching the filters (all pages)" }),
  limit: Schema.Number,
  offset: Schema.Number
}).annotations({ identifier: "NotificationPage" })
export type NotificationPage = typeof NotificationPage.Type

export const NotificationPath = Schema.Struct({ id: NotificationId })

// ---------------------------------------------------------------------------------------------
// Preferences

export const maxPerDayLimit = 100

export const MaxPerDay = Schema.Number.pipe(Schema.int(), Schema.between(1, maxPerDayLimit)).annotations({
  description: `Most notifications delivered per day in this community (1 to ${maxPerDayLimit})`
})

export const EmailAddress = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, {
    message: (issue) => `Expected an e-mail address, actual ${JSON.stringify(issue.actual)}`
  })
)

export const Kind = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))

export const Preferences = Schema.Struct({
  user_id: UserId,
  community_id: Schema.NullOr(CommunityId),
  language: Schema.String,
  max_per_day: Schema.Number,
  enabled: Schema.Boolean.annotations({ description: "false: nothing is delivered, except kinds that cannot be turned off" }),
  disabled_kinds: Schema.Array(Schema.String).annotations({ description: "Kinds the user opted out of" }),
  email_enabled: Schema.Boolean.annotations({ description: "Also deliver by e-mail (to `email`)" }),
  email: Schema.NullOr(Schema.String),
  stored: Schema.Boolean.annotations({ description: "false: nothing stored yet, these are the defaults" }),
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Preferences" })
export type Preferences = typeof Preferences.Type

export const PreferencesQuery = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: CommunityId
}).annotations({ identifier: "PreferencesQuery" }))

export const PreferencesUpdate = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: CommunityId,
  language: optional(Language),
  max_per_day: optional(MaxPerDay),
  enabled: optional(Schema.Boolean),
  disabled_kinds: optional(Schema.Array(Kind).pipe(Schema.maxItems(100))),
  email_enabled: optional(Schema.Boolean),
  email: optional(Schema.NullOr(EmailAddress))
}).annotations({
  identifier: "PreferencesUpdate",
  description: "Fields left out keep their stored value (or the default). Kinds that cannot be turned off, and " +
    "unknown kinds, are refused with 422; `email_enabled: true` needs an `email`."
}))
export type PreferencesUpdate = typeof PreferencesUpdate.Type

export const KindInfo = Schema.Struct({
  kind: Schema.String,
  label: Schema.String,
  description: Schema.String,
  editable: Schema.Boolean.annotations({ description: "false: cannot be turned off" }),
  rule_ids: Schema.Array(Schema.String)
}).annotations({ identifier: "KindInfo" })
export type KindInfo = typeof KindInfo.Type

export const KindsQuery = Schema.Struct({
  lang: optional(Language)
})

// ---------------------------------------------------------------------------------------------
// Web push

export const VapidPublicKey = Schema.Struct({
  public_key: Schema.String.annotations({
    description: "The application server key (base64url, uncompressed P-256 point) for PushManager.subscribe"
  })
}).annotations({ identifier: "VapidPublicKey" })

const Base64Url = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]+={0,2}$/, { message: () => "Expected base64url text" })
)

export const PushSubscriptionKeys = Schema.Struct({
  p256dh: Base64Url.annotations({ description: "The browser's P-256 public key (65 bytes, base64url)" }),
  auth: Base64Url.annotations({ description: "The browser's authentication secret (16 bytes, base64url)" })
})

export const PushSubscriptionBody = Schema.Struct({
  endpoint: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({
    description: "The push service URL the browser gave"
  }),
  expirationTime: optional(Schema.NullOr(Schema.Number)),
  keys: PushSubscriptionKeys
})

export const SubscribeRequest = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: Schema.optionalWith(Schema.NullOr(CommunityId), { exact: true, default: () => null }).annotations({
    description: "Community the subscription receives notifications of; none: every community"
  }),
  subscription: PushSubscriptionBody
}).annotations({ identifier: "SubscribeRequest" }))
export type SubscribeRequest = typeof SubscribeRequest.Type

export const PushSubscription = Schema.Struct({
  id: Schema.String,
  user_id: UserId,
  community_id: Schema.NullOr(CommunityId),
  endpoint_origin: Schema.String.annotations({ description: "Origin of the push service (the full URL is not shown)" }),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(Schema.Literal("unsubscribed", "gone")),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "PushSubscription" })
export type PushSubscription = typeof PushSubscription.Type

export const UnsubscribeRequest = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: Schema.optionalWith(Schema.NullOr(CommunityId), { exact: true, default: () => null }),
  endpoint: optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048))).annotations({
    description: "The subscription to remove; omitted: every subscription of the user in that community"
  })
}).annotations({ identifier: "UnsubscribeRequest" }))
export type UnsubscribeRequest = typeof UnsubscribeRequest.Type

export const UnsubscribeResult = Schema.Struct({
  removed: Schema.Number.annotations({ description: "Subscriptions disabled by this call" })
}).annotations({ identifier: "UnsubscribeResult" })

export const SendTestRequest = Contract.allErrors(Schema.Struct({
  user_id: UserId,
  community_id: Schema.optionalWith(Schema.NullOr(CommunityId), { exact: true, default: () => null }),
  title: optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  body: optional(Schema.String.pipe(Schema.maxLength(1000))),
  url: optional(Schema.String.pipe(Schema.maxLength(2048)))
}).annotations({ identifier: "SendTestRequest" }))
export type SendTestRequest = typeof SendTestRequest.Type

export const SendTestResult = Schema.Struct({
  subscriptions: Schema.Number,
  sent: Schema.Number,
  failed: Schema.Number,
  gone: Schema.Number.annotations({ description: "Subscriptions the push service no longer knows (now disabled)" }),
  errors: Schema.Array(Schema.String)
}).annotations({ identifier: "SendTestResult" })
export type SendTestResult = typeof SendTestResult.Type

// ---------------------------------------------------------------------------------------------
// Click tracking

export const ClickQuery = Schema.Struct({
  token: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)).annotations({
    description: "The `click_token` of the push payload (or of an e-mail link)"
  }),
  action: optional(Schema.String.pipe(Schema.maxLength(100))).annotations({
    description: "The notification action clicked (default `default`)"
  })
})

export const ClickRedirect = HttpApiSchema.Empty(303).annotations({
  description: "Recorded; `Location` is the notification's page in the app"
})

// ---------------------------------------------------------------------------------------------
// Scheduled events

export const ScheduledEventStatus = Schema.Literal("pending", "dispatched", "failed", "cancelled")

/**
 * An ISO 8601 date-time with a zone (`Z` or an offset), so the instant is unambiguous.
 *
 * The `arbitrary` annotation draws valid values directly. Without it, fast-check (the kit's
 * `ContractFuzz`, `Arbitrary.make`) drew random strings and kept only those passing the filter:
 * practically none do, and its `filter` retries synchronously forever, which blocked the event
 * loop of the whole process that fuzzed `POST /scheduled-events` (packages/hardening's stack).
 */
export const IsoDateTime = Schema.String.pipe(
  Schema.filter((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "Expected an ISO 8601 date-time with a zone, e.g. 2026-05-03T16:45:00Z",
    arbitrary: () => (fc) =>
      fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString())
  })
)

export const ScheduleRequest = Contract.allErrors(Schema.Struct({
  event_type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)),
  user_id: optional(UserId),
  community_id: optional(Schema.NullOr(CommunityId)),
  external_key: optional(Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)))).annotations({
    description: "The caller's key: scheduling the same key again replaces the event (and makes it pending again)"
  }),
  trigger_at: IsoDateTime.annotations({ description: "When to ingest the event (ISO 8601 date-time with offset or Z)" }),
  facts: IngestFacts
}).annotations({ identifier: "ScheduleRequest" }))
export type ScheduleRequest = typeof ScheduleRequest.Type

export const ScheduledEvent = Schema.Struct({
  id: Schema.String,
  external_key: Schema.NullOr(Schema.String),
  event_type: Schema.String,
  user_id: Schema.NullOr(UserId),
  community_id: Schema.NullOr(CommunityId),
  trigger_at: Timestamp,
  facts: JsonObject,
  status: ScheduledEventStatus,
  http_status: Schema.NullOr(Schema.Number).annotations({
    description: "Once dispatched: the status POST /ingest-event would have answered (200, 202, 204, 400, 409, 422)"
  }),
  outcomes: Schema.Array(RuleOutcome),
  last_error: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp,
  dispatched_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "ScheduledEvent" })
export type ScheduledEvent = typeof ScheduledEvent.Type

export const ScheduledCreated = Schema.Struct({
  created: Schema.Literal(true),
  event: ScheduledEvent
}).annotations({ identifier: "ScheduledCreated", ...HttpApiSchema.annotations({ status: 201 }) })

export const ScheduledReplaced = Schema.Struct({
  created: Schema.Literal(false),
  event: ScheduledEvent
}).annotations({
  identifier: "ScheduledReplaced",
  description: "An event with this external_key existed and was replaced",
  ...HttpApiSchema.annotations({ status: 200 })
})

export const ExternalKeyPath = Schema.Struct({
  external_key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))
})
